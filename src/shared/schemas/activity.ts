/**
 * Wire schemas of the activity routes. The routes validate and document their answers with them; the dashboard
 * takes the derived types with `import type` (erased), so TypeBox never reaches the browser bundle.
 */
import { type Static, Type as T, type TSchema } from "@sinclair/typebox";

const nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);

/** An entry as the list routes return it. */
export const ActivityEntry = T.Object({
  id: T.Integer(),
  app_slug: nullable(T.String()),
  actor_name: T.String(),
  actor_source: T.String(),
  ip: nullable(T.String()),
  category: T.String(),
  action: T.String(),
  target: nullable(T.String()),
  summary: T.String(),
  error: nullable(T.String()),
  compose_version_id: nullable(T.Integer()),
  sync_status: nullable(T.String()),
  sync_commit_sha: nullable(T.String()),
  sync_error: nullable(T.String()),
  created_at: T.String({ format: "date-time" }),
});
export type ActivityEntry = Static<typeof ActivityEntry>;

/** One entry with its snapshots (GET /activity/{id}). */
export const ActivityDetail = T.Composite([
  ActivityEntry,
  T.Object({ before_json: nullable(T.Unknown()), after_json: nullable(T.Unknown()) }),
]);
export type ActivityDetail = Static<typeof ActivityDetail>;

/** The cursor-paginated list envelope. */
export const ActivityPage = T.Object({ entries: T.Array(ActivityEntry), next_before: nullable(T.Integer()) });
export type ActivityPage = Static<typeof ActivityPage>;

/** GET and PUT /system/audit-config. */
export const AuditConfig = T.Object({
  retention_days: T.Integer({
    minimum: 0,
    maximum: 36500,
    error: "retention_days must be a whole number of days from 0 to 36500",
  }),
});
export type AuditConfig = Static<typeof AuditConfig>;
