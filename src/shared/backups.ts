/** Wire shapes of backup configs, runs and restores (snake_case, as sent). */

export const BACKUP_STRATEGIES = ["postgres", "mysql", "redis", "sqlite", "volume"] as const;
export type BackupStrategy = (typeof BACKUP_STRATEGIES)[number];

/** Where archives go. `secret_key` is write-only: responses carry `""` or `"********"`. */
export type BackupTarget =
  | { kind: "local" }
  | {
      kind: "s3";
      endpoint: string;
      bucket: string;
      prefix: string;
      region: string;
      access_key: string;
      secret_key: string;
      /** Path-style addressing (most self-hosted S3 servers); default true. */
      path_style?: boolean;
    };

/** A config as sent to and returned by /api/apps/{slug}/backups/configs and /api/backups/configs/{id}. */
export interface BackupConfig {
  id: number;
  app_slug: string;
  strategy: BackupStrategy;
  service: string;
  target: BackupTarget;
  /** Cron expression; null or "" runs only when asked. */
  schedule: string | null;
  /** IANA time zone of the schedule; null: the server's. */
  timezone: string | null;
  retention_count: number | null;
  retention_days: number | null;
  /** Commands run with `sh -c` in the service's container before and after the backup. */
  pre_hooks: string[];
  post_hooks: string[];
  enabled: boolean;
  /** The next scheduled run (RFC 3339), null without a schedule or when disabled. */
  next_run_at: string | null;
  created_at: string;
  updated_at: string;
}

export type RunStatus = "running" | "succeeded" | "failed";

/** An entry of GET /api/apps/{slug}/backups/runs, newest first. */
export interface BackupRun {
  id: number;
  config_id: number | null;
  strategy: string;
  service: string | null;
  status: RunStatus;
  trigger: "schedule" | "manual" | "missed";
  size_bytes: number | null;
  sha256: string | null;
  /** Bytes written so far while running. */
  progress_bytes: number | null;
  target_kind: "local" | "s3";
  started_at: string;
  finished_at: string | null;
  error: string | null;
}

/** An entry of GET /api/apps/{slug}/backups/restores, newest first. */
export interface BackupRestore {
  id: number;
  run_id: number | null;
  strategy: string;
  service: string | null;
  container: string | null;
  status: RunStatus;
  bytes: number | null;
  started_at: string;
  finished_at: string | null;
  error: string | null;
}

/** What the server detected an app's services hold (GET /api/apps/{slug}/backups/detected). */
export interface DetectedStrategy {
  service: string;
  strategy: BackupStrategy;
  /** Why: the label, the image name, or the port. */
  reason: string;
}
