/** Subnets Sundeck gave app networks from its pool (`docker.subnet_pool`): kept until the app is removed. */
import { sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const appSubnets = sqliteTable(
  "app_subnets",
  {
    /** `a.b.c.d/n`, IPv4. */
    subnet: text("subnet").primaryKey(),
    slug: text("slug").notNull(),
    /** The key under the compose file's `networks:` (`default` included). */
    network: text("network").notNull(),
    /** The engine's name of that network (`sundeck-<slug>_<key>`, or the file's `name`). */
    name: text("name").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("app_subnets_slug_network").on(t.slug, t.network)],
);
