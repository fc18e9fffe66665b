/**
 * Activity on the server side: who acted, what a service records, which entries git sync carries, and the query
 * schemas. The vocabulary and the entry shapes the routes answer with live in src/shared/.
 */
import { t } from "elysia";
import type { ActorSource, Category } from "../../shared/activity";

export { ACTOR_SOURCES, type ActorSource, CATEGORIES, type Category } from "../../shared/activity";

/** Who made a change. */
export interface Actor {
  userId: number | null;
  name: string;
  source: ActorSource;
  ip: string | null;
}

/** What a service hands the recorder. Snapshots are redacted before they are stored. */
export interface NewEntry {
  actor: Actor;
  category: Category;
  action: string;
  target?: string | null;
  summary: string;
  appSlug?: string | null;
  appId?: number | null;
  error?: string | null;
  composeVersionId?: number | null;
  before?: unknown;
  after?: unknown;
}

/**
 * Entries git sync commits: config categories, and app creation/removal. Start, stop, scale, backup runs and restores
 * stay runtime-only.
 */
export function isSyncable(category: Category, action: string): boolean {
  switch (category) {
    // runs and restores are runtime events; only config changes are desired state
    case "backup":
      return action.startsWith("config_");
    case "compose":
    case "endpoint":
    case "alert":
    case "webhook":
    case "registry":
    case "access":
      return true;
    case "lifecycle":
      return action === "created" || action === "removed";
    default:
      return false;
  }
}

export const ListQuery = t.Object({
  categories: t.Optional(t.String({ description: "comma-separated category names" })),
  app: t.Optional(t.String({ description: "app slug" })),
  limit: t.Optional(t.String({ description: "page size, default 50, maximum 200" })),
  before: t.Optional(t.String({ description: "entry id cursor (exclusive)" })),
});

/** The recent feed takes the list's filters and cursor; its size is fixed. */
export const RecentQuery = t.Omit(ListQuery, ["limit"]);
