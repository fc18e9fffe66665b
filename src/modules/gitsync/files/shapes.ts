/**
 * The one shape of each exported item, shared by export and import so both sides compare like with like: stored
 * rules and backup configs as written to the files, file entries with their defaults filled in, and the keys that
 * pair a file's entry with a stored one.
 */
import type { AlertRule } from "../../../shared/alerts";
import type { BackupConfig } from "../../../shared/backups";
import type { BackupData, RuleData } from "./schema";

export type RuleShape = Required<RuleData>;
export type BackupShape = Required<Omit<BackupData, "target">> & { target: BackupData["target"] };

/** JSON with every object's keys sorted: equal data, equal text. */
export function canon(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, x[k]]),
        )
      : x,
  );
}

/** Sorted by `key`, then by the whole item (duplicates of a key keep a fixed order). */
export function sortedBy<T>(items: T[], key: (t: T) => string): T[] {
  const k = (t: T) => `${key(t)}\u0000${canon(t)}`;
  return [...items].sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
}

/** A stored rule as written, its webhooks by name (ids of destinations gone are dropped). */
export function ruleShape(r: AlertRule, webhookName: (id: number) => string | undefined): RuleShape {
  return {
    name: r.name,
    kind: r.kind,
    threshold: r.threshold,
    duration: r.duration,
    enabled: r.enabled,
    repeat_interval: r.repeat_interval,
    silenced_until: r.silenced_until,
    webhooks: r.webhook_ids
      .map(webhookName)
      .filter((n): n is string => n !== undefined)
      .sort(),
  };
}

/** A file's rule with its defaults. */
export function ruleOfFile(r: RuleData): RuleShape {
  return {
    enabled: true,
    repeat_interval: null,
    silenced_until: null,
    ...r,
    webhooks: [...new Set(r.webhooks ?? [])].sort(),
  };
}

/** A stored backup config as written: never the secret, not even the mask. */
export function backupShape(c: BackupConfig): BackupShape {
  const t = c.target;
  return {
    strategy: c.strategy,
    service: c.service,
    target:
      t.kind === "local"
        ? { kind: "local" }
        : {
            kind: "s3",
            endpoint: t.endpoint,
            bucket: t.bucket,
            prefix: t.prefix,
            region: t.region,
            access_key: t.access_key,
            path_style: t.path_style ?? true,
          },
    schedule: c.schedule || null,
    timezone: c.timezone,
    retention_count: c.retention_count,
    retention_days: c.retention_days,
    pre_hooks: c.pre_hooks,
    post_hooks: c.post_hooks,
    enabled: c.enabled,
  };
}

/** A file's backup config with its defaults. */
export function backupOfFile(b: BackupData): BackupShape {
  return {
    schedule: null,
    timezone: null,
    retention_count: null,
    retention_days: null,
    pre_hooks: [],
    post_hooks: [],
    enabled: true,
    ...b,
  };
}

/**
 * What pairs a file's backup config with a stored one: service, strategy and the whole target but the secret. A
 * changed S3 target is then a new config, which needs a secret the repository never holds: a remote cannot point
 * a stored secret (or the app's data) at another endpoint.
 */
export const backupKey = (b: BackupShape): string => canon([b.service, b.strategy, b.target]);

/** What pairs rules: the name. */
export const ruleKey = (r: RuleShape): string => r.name;
