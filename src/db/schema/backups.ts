/** Backup configs (per app service, or Sundeck's own state), their runs, and restores. */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const backupConfigs = sqliteTable(
  "backup_configs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** Null for a snapshot of Sundeck's own database (strategy `state`). */
    appSlug: text("app_slug"),
    /** postgres, mysql, redis, sqlite, volume, or state. */
    strategy: text("strategy").notNull(),
    /** The compose service backed up; null for `state`. */
    service: text("service"),
    /** local or s3. */
    targetKind: text("target_kind").notNull(),
    /** The target's fields other than the secret, JSON (s3: endpoint, bucket, prefix, region, access_key, path_style). */
    targetJson: text("target_json").notNull(),
    /** The S3 secret key sealed with the master key; null for local. */
    secretEnc: text("secret_enc"),
    /** Cron expression (5 or 6 fields); null: runs only when asked. */
    schedule: text("schedule"),
    /** IANA time zone of the schedule; null: the server's. */
    timezone: text("timezone"),
    /** Keep at most this many succeeded runs; null: no count limit. */
    retentionCount: integer("retention_count"),
    /** Delete runs older than this many days; null: no age limit. */
    retentionDays: integer("retention_days"),
    /** JSON array of commands run in the service's container before the backup. */
    preHooks: text("pre_hooks").notNull(),
    postHooks: text("post_hooks").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    /** The last scheduled time a run was started for (ISO): a later due time not run is a missed run. */
    lastScheduledAt: text("last_scheduled_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("backup_configs_app").on(t.appSlug)],
);

export const backupRuns = sqliteTable(
  "backup_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** Null once the config is removed (the stored archive stays restorable until retention or removal). */
    configId: integer("config_id").references(() => backupConfigs.id, { onDelete: "set null" }),
    appSlug: text("app_slug"),
    strategy: text("strategy").notNull(),
    service: text("service"),
    /** The target as it was when the run wrote (kind + JSON without secret); the secret stays on the config. */
    targetKind: text("target_kind").notNull(),
    targetJson: text("target_json").notNull(),
    /**
     * The S3 secret the run wrote with, sealed with the master key (null for local): the run's archive stays
     * downloadable, restorable and removable by retention after its config is changed or removed.
     */
    secretEnc: text("secret_enc"),
    /** Where the archive is: a path under data_dir for local, the object key for s3. */
    location: text("location"),
    /** running, succeeded or failed. */
    status: text("status").notNull(),
    /** schedule, manual or missed. */
    trigger: text("trigger").notNull(),
    sizeBytes: integer("size_bytes"),
    sha256: text("sha256"),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
    error: text("error"),
  },
  (t) => [index("backup_runs_app").on(t.appSlug), index("backup_runs_config").on(t.configId)],
);

export const backupRestores = sqliteTable(
  "backup_restores",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** Null for an uploaded archive. */
    runId: integer("run_id"),
    appSlug: text("app_slug").notNull(),
    strategy: text("strategy").notNull(),
    service: text("service"),
    container: text("container"),
    /**
     * JSON array of the ids of every container the restore stopped (null: none yet): recovery after a kill starts
     * each of them again.
     */
    stoppedContainers: text("stopped_containers"),
    /** running, succeeded or failed. */
    status: text("status").notNull(),
    bytes: integer("bytes"),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
    error: text("error"),
  },
  (t) => [index("backup_restores_app").on(t.appSlug)],
);
