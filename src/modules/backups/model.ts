/**
 * Request schemas of the backups routes, one per shape, and the checks a schema cannot say: a cron expression that
 * croner accepts, an IANA time zone, an S3 target's fields, hook caps.
 */
import { Cron } from "croner";
import { t } from "elysia";
import { BACKUP_STRATEGIES, type BackupStrategy } from "../../shared/backups";
import { parseS3Config } from "./targets/s3-config";

export const MAX_HOOKS = 10;
export const MAX_HOOK = 1000;
export const MAX_SCHEDULE = 120;
export const MAX_FIELD = 512;

const Strategy = t.Union(
  BACKUP_STRATEGIES.map((s) => t.Literal(s)),
  { error: `strategy must be one of ${BACKUP_STRATEGIES.join(", ")}` },
);
const Hooks = (name: string) =>
  t.Array(t.String({ maxLength: MAX_HOOK }), {
    maxItems: MAX_HOOKS,
    error: `${name} must be at most ${MAX_HOOKS} commands of at most ${MAX_HOOK} characters`,
  });
const Count = (name: string) =>
  t.Union([t.Integer({ minimum: 1, maximum: 100_000 }), t.Null()], { error: `${name} must be a whole number ≥ 1 or null` });
const Field = (name: string) =>
  t.String({ maxLength: MAX_FIELD, error: `target.${name} must be at most ${MAX_FIELD} characters` });

/** A target as sent: local, or s3 with its fields (checked by `checkTarget`). */
export const TargetBody = t.Object(
  {
    kind: t.Union([t.Literal("local"), t.Literal("s3")], { error: "target.kind must be local or s3" }),
    endpoint: t.Optional(Field("endpoint")),
    bucket: t.Optional(Field("bucket")),
    prefix: t.Optional(Field("prefix")),
    region: t.Optional(Field("region")),
    access_key: t.Optional(Field("access_key")),
    secret_key: t.Optional(Field("secret_key")),
    path_style: t.Optional(t.Boolean({ error: "target.path_style must be true or false" })),
  },
  { error: "target must be {kind: local} or {kind: s3, endpoint, bucket, prefix, region, access_key, secret_key}" },
);
export type TargetInput = typeof TargetBody.static;

/** POST /api/apps/:slug/backups/configs and PUT /api/backups/configs/:id (PUT: the fields given replace). */
export const ConfigBody = t.Object({
  strategy: t.Optional(Strategy),
  service: t.Optional(t.String({ minLength: 1, maxLength: 200, error: "service must name a service of the app" })),
  target: t.Optional(TargetBody),
  schedule: t.Optional(
    t.Union([t.String({ maxLength: MAX_SCHEDULE }), t.Null()], { error: "schedule must be a cron expression or null" }),
  ),
  timezone: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()], { error: "timezone must be an IANA time zone or null" })),
  retention_count: t.Optional(Count("retention_count")),
  retention_days: t.Optional(Count("retention_days")),
  pre_hooks: t.Optional(Hooks("pre_hooks")),
  post_hooks: t.Optional(Hooks("post_hooks")),
  enabled: t.Optional(t.Boolean({ error: "enabled must be true or false" })),
});
export type ConfigInput = typeof ConfigBody.static;

/** GET runs and restores: `limit` (default 50, at most 500). */
export const ListQuery = t.Object({ limit: t.Optional(t.String({ description: "page size, default 50, maximum 500" })) });

/** What a target is at rest: kind, the JSON of its fields but the secret, and the secret apart. */
export interface TargetSpec {
  kind: "local" | "s3";
  endpoint?: string;
  bucket?: string;
  prefix?: string;
  region?: string;
  access_key?: string;
  path_style?: boolean;
}

/**
 * The target's fields at rest (the secret apart), checked by the targets' own rules (400 naming the field). `secret`
 * is the S3 secret key in force: the one sent, or the stored one when the request keeps it.
 */
export function checkTarget(t: TargetInput, secret: string | null): TargetSpec {
  if (t.kind === "local") return { kind: "local" };
  const c = parseS3Config({
    endpoint: t.endpoint,
    bucket: t.bucket,
    prefix: t.prefix,
    region: t.region,
    accessKey: t.access_key,
    secretKey: secret ?? "",
    pathStyle: t.path_style,
  });
  return {
    kind: "s3",
    endpoint: c.endpoint,
    bucket: c.bucket,
    prefix: c.prefix,
    region: c.region,
    access_key: c.accessKey,
    path_style: c.pathStyle,
  };
}

/** The time zone if Intl knows it, else the reason. */
export function checkTimezone(tz: string): string | { error: string } {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return { error: `timezone: ${tz} is not an IANA time zone` };
  }
}

/** The cron expression if croner accepts it (5 or 6 fields) and it ever fires, else the reason. */
export function checkSchedule(expr: string, tz: string | null): string | { error: string } {
  const e = expr.trim().replace(/\s+/g, " ");
  const parts = e.split(" ");
  if (parts.length < 5 || parts.length > 6) return { error: "schedule must be a cron expression of 5 or 6 fields" };
  try {
    const c = new Cron(e, { paused: true, ...(tz ? { timezone: tz } : {}) });
    const next = c.nextRun();
    c.stop();
    if (next === null) return { error: "schedule: the expression never fires" };
  } catch (err) {
    return { error: `schedule: ${(err as Error).message.toLowerCase().replace(/\.$/, "")}` };
  }
  return e;
}

/**
 * What the API refuses on top of {@link checkSchedule}: a seconds field of more than one second. Through the API a
 * backup runs at most once a minute (`30 * * * * *` is fine), never a storm of one per second on every config.
 */
export function checkCadence(expr: string | null | undefined): { error: string } | null {
  const parts = expr?.trim().split(/\s+/) ?? [];
  if (parts.length !== 6 || (/^\d{1,2}$/.test(parts[0]) && Number(parts[0]) < 60)) return null;
  return { error: "schedule: the seconds field must be one second from 0 to 59 (at most one backup a minute)" };
}

/** Hook commands trimmed, empty ones refused. */
export function checkHooks(name: string, hooks: string[]): string[] | { error: string } {
  const out = hooks.map((h) => h.trim());
  if (out.some((h) => !h || h.includes("\0"))) return { error: `${name} must not hold empty commands` };
  return out;
}

/** Narrow to a strategy id. */
export const isStrategy = (s: string): s is BackupStrategy => (BACKUP_STRATEGIES as readonly string[]).includes(s);
