/** The activity (audit) log: one row per change, kept after its app is purged. */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const activity = sqliteTable(
  "activity",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    appSlug: text("app_slug"),
    /** Reference to the app row; cleared when the app is purged while app_slug stays. */
    appId: integer("app_id"),
    actorUserId: integer("actor_user_id"),
    actorName: text("actor_name").notNull(),
    actorSource: text("actor_source").notNull(),
    ip: text("ip"),
    category: text("category").notNull(),
    action: text("action").notNull(),
    target: text("target"),
    summary: text("summary").notNull(),
    error: text("error"),
    composeVersionId: integer("compose_version_id"),
    syncStatus: text("sync_status"),
    syncCommitSha: text("sync_commit_sha"),
    syncError: text("sync_error"),
    beforeJson: text("before_json"),
    afterJson: text("after_json"),
    createdAt: text("created_at").notNull(),
  },
  // each index ends in the rowid, so "= ... ORDER BY id DESC" walks it without sorting
  (t) => [
    index("activity_app").on(t.appSlug),
    index("activity_category").on(t.category),
    index("activity_app_category").on(t.appSlug, t.category),
    index("activity_actor_category").on(t.actorUserId, t.category),
    index("activity_created").on(t.createdAt),
  ],
);
