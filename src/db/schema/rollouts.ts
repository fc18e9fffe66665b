/**
 * Rolling replacements in progress, one row per service: the old containers serving, the new ones started beside
 * them, and whether traffic was switched. A crash mid-rollout leaves the row; the next start converges on it (the old
 * set before the switch, the new one after) and deletes it.
 */
import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export type RolloutPhase = "starting" | "switched";

export const rollouts = sqliteTable(
  "rollouts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    slug: text("slug").notNull(),
    service: text("service").notNull(),
    /** JSON array of container ids. */
    oldIds: text("old_ids").notNull(),
    newIds: text("new_ids").notNull().default("[]"),
    phase: text("phase").$type<RolloutPhase>().notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("rollouts_slug_service").on(t.slug, t.service)],
);
