/** Runtime settings changed through the API (they override the config file): retention, public host. */
import { sqliteTable, text } from "drizzle-orm/sqlite-core";

export const settings = sqliteTable("settings", {
  key: text("key").primaryKey(),
  /** JSON-encoded value. */
  value: text("value").notNull(),
  updatedAt: text("updated_at").notNull(),
});
