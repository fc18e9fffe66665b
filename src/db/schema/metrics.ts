/** Request statistics per app, rolled up into the configured metrics tiers. */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const requestStats = sqliteTable(
  "request_stats",
  {
    appSlug: text("app_slug").notNull(),
    /** Tier name from `metrics.tiers` (raw, 1m, 5m, 1h). */
    tier: text("tier").notNull(),
    /** Bucket start, ms since the epoch, aligned to the tier's resolution. */
    bucket: integer("bucket").notNull(),
    /** The merged StatsBatch of the bucket, JSON. */
    data: text("data").notNull(),
  },
  (t) => [primaryKey({ columns: [t.appSlug, t.tier, t.bucket] })],
);
