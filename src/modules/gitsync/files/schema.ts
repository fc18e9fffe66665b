/**
 * The shapes of `<slug>/sundeck.yml` and `_global.yml`, one schema each: strict (an unknown key is refused, naming
 * the file and the key), with the API's limits. Export writes every field; a hand-written file may leave out the
 * ones with a default.
 */
import { type Static, Type as T, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ALERT_KINDS } from "../../../shared/alerts";
import { BACKUP_STRATEGIES } from "../../../shared/backups";
import { ROLES } from "../../../shared/roles";
import { WEBHOOK_KINDS } from "../../../shared/webhooks";
import { MAX_RULES_PER_SCOPE } from "../../alerts/service";
import { MAX_CONFIGS } from "../../backups/configs";
import { MAX_FIELD, MAX_HOOK, MAX_HOOKS, MAX_SCHEDULE } from "../../backups/model";
import { SyncFileError } from "./yaml";

/** Backup configs a sidecar may hold: the API's cap. */
export const MAX_BACKUPS_PER_APP = MAX_CONFIGS;
export const FORMAT_VERSION = 1;

const strict = { additionalProperties: false };
const oneOf = <V extends string>(values: readonly V[]) => T.Union(values.map((v) => T.Literal(v)));
const Str = (max: number, min = 0) => T.String({ minLength: min, maxLength: max });
const OrNull = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);
const Count = OrNull(T.Integer({ minimum: 1, maximum: 100_000 }));

const Rule = T.Object(
  {
    name: Str(100, 1),
    kind: oneOf(ALERT_KINDS),
    threshold: T.Number(),
    duration: Str(32, 1),
    enabled: T.Optional(T.Boolean()),
    repeat_interval: T.Optional(OrNull(Str(32))),
    silenced_until: T.Optional(OrNull(Str(64))),
    /** Webhook destinations by name. */
    webhooks: T.Optional(T.Array(Str(100, 1), { maxItems: 20 })),
  },
  strict,
);

const Target = T.Object(
  {
    kind: oneOf(["local", "s3"]),
    endpoint: T.Optional(Str(MAX_FIELD)),
    bucket: T.Optional(Str(MAX_FIELD)),
    prefix: T.Optional(Str(MAX_FIELD)),
    region: T.Optional(Str(MAX_FIELD)),
    access_key: T.Optional(Str(MAX_FIELD)),
    path_style: T.Optional(T.Boolean()),
  },
  strict,
);

const Backup = T.Object(
  {
    strategy: oneOf(BACKUP_STRATEGIES),
    service: Str(200, 1),
    target: Target,
    schedule: T.Optional(OrNull(Str(MAX_SCHEDULE))),
    timezone: T.Optional(OrNull(Str(64))),
    retention_count: T.Optional(Count),
    retention_days: T.Optional(Count),
    pre_hooks: T.Optional(T.Array(Str(MAX_HOOK), { maxItems: MAX_HOOKS })),
    post_hooks: T.Optional(T.Array(Str(MAX_HOOK), { maxItems: MAX_HOOKS })),
    enabled: T.Optional(T.Boolean()),
  },
  strict,
);

const Grant = T.Object({ username: Str(64, 1), role: oneOf(ROLES) }, strict);

/** `<slug>/sundeck.yml` */
export const Sidecar = T.Object(
  {
    version: T.Literal(FORMAT_VERSION),
    alert_rules: T.Array(Rule, { maxItems: MAX_RULES_PER_SCOPE }),
    backups: T.Array(Backup, { maxItems: MAX_BACKUPS_PER_APP }),
    /** Users with a grant on the app, and their (global) role. */
    access: T.Array(Grant, { maxItems: 10_000 }),
  },
  strict,
);

/** `_global.yml` */
export const Global = T.Object(
  {
    version: T.Literal(FORMAT_VERSION),
    /** Rules of the global scope (every app, or the host). */
    alert_rules: T.Array(Rule, { maxItems: MAX_RULES_PER_SCOPE }),
    users: T.Array(T.Object({ username: Str(64, 1), role: oneOf(ROLES) }, strict), { maxItems: 10_000 }),
    registries: T.Array(T.Object({ name: Str(63, 1), url: Str(255, 1), username: Str(255) }, strict), { maxItems: 1000 }),
    /** `origin` only: Slack and Discord URLs carry their token in the path. */
    webhooks: T.Array(
      T.Object({ name: Str(100, 1), origin: Str(2048), kind: oneOf(WEBHOOK_KINDS), enabled: T.Boolean() }, strict),
      { maxItems: 1000 },
    ),
  },
  strict,
);

export type SidecarData = Static<typeof Sidecar>;
export type GlobalData = Static<typeof Global>;
export type RuleData = Static<typeof Rule>;
export type BackupData = Static<typeof Backup>;

/** `/alert_rules/0/name` → `alert_rules[0].name` */
function keyOf(path: string): string {
  return path
    .split("/")
    .filter(Boolean)
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join("");
}

/** Check `data` against `schema`; throw a SyncFileError naming the file, the key and what is wrong. */
export function checkShape<S extends TSchema>(schema: S, data: unknown, file: string): Static<S> {
  if (Value.Check(schema, data)) return data as Static<S>;
  const errors = [...Value.Errors(schema, data)];
  // an unknown key is the clearest thing to name; otherwise the deepest error says most
  const e = errors.find((x) => x.message === "Unexpected property") ?? errors.sort((a, b) => b.path.length - a.path.length)[0];
  const key = keyOf(e.path);
  if (e.message === "Unexpected property") throw new SyncFileError(`${file}: unknown key ${key}`);
  if (e.path === "" || e.value === undefined) {
    const missing = errors.find((x) => x.value === undefined);
    if (missing) throw new SyncFileError(`${file}: ${keyOf(missing.path)} is required`);
  }
  const choices = (e.schema as { anyOf?: Array<{ const?: unknown }> }).anyOf?.map((s) => s.const);
  if (choices?.length && choices.every((c) => typeof c === "string"))
    throw new SyncFileError(`${file}: ${key} must be one of ${choices.join(", ")}`);
  throw new SyncFileError(`${file}: ${key || "the document"}: ${e.message.toLowerCase()}`);
}
