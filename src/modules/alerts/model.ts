/**
 * Alert rule bodies and queries: the `t` schemas of the routes, and the checks that depend on the kind (threshold
 * range, durations, which kinds may be per app). Failures are 400s that name the field.
 */
import { t } from "elysia";
import { parseDuration } from "../../lib/duration";
import { badRequest } from "../../lib/errors";
import { ALERT_KINDS, type AlertKind } from "../../shared/alerts";
import { checkSlug } from "../apps/slug";
import type { RuleFields } from "./repo";

const Fields = {
  name: t.String({ minLength: 1, maxLength: 100 }),
  app_slug: t.Union([t.String(), t.Null()], { description: "null: a global rule (every app, or the host for disk)" }),
  kind: t.Union(
    ALERT_KINDS.map((k) => t.Literal(k)),
    { error: `kind must be one of ${ALERT_KINDS.join(", ")}` },
  ),
  threshold: t.Number(),
  duration: t.String({ description: "how long the condition holds before firing, e.g. 5m; 0s fires at once" }),
  webhook_ids: t.Array(t.Integer({ minimum: 1 }), { maxItems: 20 }),
  enabled: t.Boolean(),
  repeat_interval: t.Union([t.String(), t.Null()], { description: "notify again while firing every this long" }),
  silenced_until: t.Union([t.String(), t.Null()], { description: "RFC 3339 time until which notifications are held" }),
};

/** POST /api/alerts/rules: app_slug, webhook_ids, enabled, repeat_interval and silenced_until may be left out. */
export const RuleBody = t.Object({
  name: Fields.name,
  kind: Fields.kind,
  threshold: Fields.threshold,
  duration: Fields.duration,
  app_slug: t.Optional(Fields.app_slug),
  webhook_ids: t.Optional(Fields.webhook_ids),
  enabled: t.Optional(Fields.enabled),
  repeat_interval: t.Optional(Fields.repeat_interval),
  silenced_until: t.Optional(Fields.silenced_until),
});

/** PUT /api/alerts/rules/:id: the fields given replace the stored ones, the rest stay. */
export const RulePatch = t.Partial(t.Object(Fields));

/** POST /api/alerts/rules/:id/silence: `until` null lifts the silence. */
export const SilenceBody = t.Object({ until: Fields.silenced_until });

export const HistoryQuery = t.Object({
  app: t.Optional(t.String({ description: "app slug" })),
  rule: t.Optional(t.String({ description: "rule id" })),
  state: t.Optional(t.String({ description: "firing or resolved" })),
  limit: t.Optional(t.String({ description: "page size, default 50, maximum 200" })),
  before: t.Optional(t.String({ description: "entry id cursor (exclusive)" })),
});

export type RuleInput = typeof RulePatch.static;

const DAY_MS = 86_400_000;
/** Longest a condition may be required to hold: raw samples are kept 24 h. */
const MAX_DURATION_MS = DAY_MS;
/**
 * The sample kinds read every raw sample of their window at each tick: an hour of 100 containers is 36,000 rows,
 * a day would be 864,000 every 10 s, so their window stops at an hour.
 */
const MAX_SAMPLE_DURATION_MS = 3_600_000;
const SAMPLE_KINDS: ReadonlySet<string> = new Set(["cpu", "memory", "disk"]);
const MIN_REPEAT_MS = 60_000;
const MAX_REPEAT_MS = 30 * DAY_MS;

/** Threshold bounds per kind, and what the number means (for the 400). */
const THRESHOLD: Record<AlertKind, { min: number; max: number; what: string }> = {
  // percent of one core without a limit: 6400 is 64 busy cores
  cpu: { min: 0, max: 6400, what: "a percent of one core or of the limit (0 to 6400)" },
  memory: { min: 0, max: 100, what: "a percent (0 to 100)" },
  disk: { min: 0, max: 100, what: "a percent of free space (0 to 100)" },
  app_down: { min: 0, max: Number.MAX_SAFE_INTEGER, what: "unused (0)" },
  backup_failed: { min: 0, max: Number.MAX_SAFE_INTEGER, what: "unused (0)" },
  http_5xx: { min: 0, max: 100, what: "a percent of requests (0 to 100)" },
  cert_expiry: { min: 0, max: 365, what: "a number of days (0 to 365)" },
};

/** Kinds that watch the host, never an app. */
export const HOST_KINDS: ReadonlySet<string> = new Set(["disk"]);

/** Milliseconds of a rule duration text (validated on write, so never null for a stored rule). */
export const durationMs = (text: string): number => parseDuration(text) ?? 0;

/** Validate a complete rule and normalise it; the app's existence and the webhooks are checked by the service. */
export function checkRule(i: RuleFields): RuleFields {
  const name = i.name.trim();
  if (!name) throw badRequest("name must not be blank");
  // a rule name lands in chat messages, activity entries and terminals, like a webhook's name
  if (/[\0-\x1f\x7f]/.test(name)) throw badRequest("name must not contain control characters");
  const kind = i.kind as AlertKind;
  if (!ALERT_KINDS.includes(kind)) throw badRequest(`kind must be one of ${ALERT_KINDS.join(", ")}`);
  const app = i.app_slug === null ? null : checkSlug(i.app_slug);
  if (app !== null && HOST_KINDS.has(kind)) throw badRequest(`app_slug must be null for ${kind}: it watches the host`);
  const b = THRESHOLD[kind];
  if (!Number.isFinite(i.threshold) || i.threshold < b.min || i.threshold > b.max) {
    throw badRequest(`threshold of ${kind} must be ${b.what}`);
  }
  const d = parseDuration(i.duration);
  if (d === null || d < 0 || d > MAX_DURATION_MS)
    throw badRequest("duration must be a duration such as 0s, 5m or 1h (at most 24h)");
  if (SAMPLE_KINDS.has(kind) && d > MAX_SAMPLE_DURATION_MS) throw badRequest(`duration of ${kind} must be at most 1h`);
  let repeat: string | null = null;
  if (i.repeat_interval !== null && i.repeat_interval !== "") {
    const r = parseDuration(i.repeat_interval);
    if (r === null || r < MIN_REPEAT_MS || r > MAX_REPEAT_MS) {
      throw badRequest("repeat_interval must be null or a duration from 1m to 30d");
    }
    repeat = i.repeat_interval.trim();
  }
  return {
    name,
    app_slug: app,
    kind,
    threshold: i.threshold,
    duration: i.duration.trim(),
    webhook_ids: [...new Set(i.webhook_ids)],
    enabled: i.enabled,
    repeat_interval: repeat,
    silenced_until: checkTime(i.silenced_until, "silenced_until"),
  };
}

/** An RFC 3339 time normalised to UTC milliseconds, or null. */
export function checkTime(v: string | null, field: string): string | null {
  if (v === null || v === "") return null;
  // a date alone or a local time without offset would be read in the server's zone: ask for an explicit one
  const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i.test(v) ? Date.parse(v) : Number.NaN;
  if (!Number.isFinite(ms)) throw badRequest(`${field} must be null or an RFC 3339 time such as 2026-01-02T15:04:05Z`);
  return new Date(ms).toISOString();
}
