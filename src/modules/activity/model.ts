/** Activity vocabulary: categories, actor sources, the entry shapes, and which entries git sync carries. */
import { t } from "elysia";

import type { ActorSource, Category } from "./categories";

export { ACTOR_SOURCES, type ActorSource, CATEGORIES, type Category } from "./categories";

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

/** Entries git sync commits: config categories, and app creation/removal. Start, stop, scale stay runtime-only. */
export function isSyncable(category: Category, action: string): boolean {
  switch (category) {
    case "compose":
    case "endpoint":
    case "backup":
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

const nullable = <T extends import("@sinclair/typebox").TSchema>(s: T) => t.Union([s, t.Null()]);

/** An entry as the list routes return it. */
export const ActivityEntry = t.Object({
  id: t.Integer(),
  app_slug: nullable(t.String()),
  actor_name: t.String(),
  actor_source: t.String(),
  ip: nullable(t.String()),
  category: t.String(),
  action: t.String(),
  target: nullable(t.String()),
  summary: t.String(),
  error: nullable(t.String()),
  compose_version_id: nullable(t.Integer()),
  sync_status: nullable(t.String()),
  sync_commit_sha: nullable(t.String()),
  sync_error: nullable(t.String()),
  created_at: t.String({ format: "date-time" }),
});

/** One entry with its snapshots (GET /activity/{id}). */
export const ActivityDetail = t.Composite([
  ActivityEntry,
  t.Object({ before_json: nullable(t.Unknown()), after_json: nullable(t.Unknown()) }),
]);

/** The cursor-paginated list envelope. */
export const ActivityPage = t.Object({ entries: t.Array(ActivityEntry), next_before: nullable(t.Integer()) });

export const ListQuery = t.Object({
  categories: t.Optional(t.String({ description: "comma-separated category names" })),
  app: t.Optional(t.String({ description: "app slug" })),
  limit: t.Optional(t.String({ description: "page size, default 50, maximum 200" })),
  before: t.Optional(t.String({ description: "entry id cursor (exclusive)" })),
});

/** The recent feed takes the list's filters and cursor; its size is fixed. */
export const RecentQuery = t.Omit(ListQuery, ["limit"]);

export const AuditConfig = t.Object({
  retention_days: t.Integer({
    minimum: 0,
    maximum: 36500,
    error: "retention_days must be a whole number of days from 0 to 36500",
  }),
});
