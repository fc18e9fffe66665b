/**
 * What the backups domain is built from: storage, the clock, Docker, strategies, targets and the archive vetting,
 * each behind a narrow interface so the runner, the restorer and the scheduler are tested with the real SQLite and
 * the real local target while only what surrounds them is faked.
 */
import type { Db } from "../../db";
import type { Secrets } from "../../lib/crypto";
import type { Clock } from "../../lib/time";
import type { Log } from "../../log/logger";
import type { DetectedStrategy } from "../../shared/backups";
import type { ServiceContainers } from "./containers";
import type { TargetSpec } from "./model";
import type { BackupRepo, ConfigRow } from "./repo";
import type { BackupSource, Strategy, Target } from "./types";

/** The backup_failed alert event (ctx.alerts.raise). */
export interface AlertRaiser {
  raise(e: { kind: "backup_failed"; app_slug: string | null; message: string; ok?: boolean; subject?: string }): void;
}

export interface BackupDeps {
  db: Db;
  clock: Clock;
  log: Log;
  repo: BackupRepo;
  secrets: Secrets;
  alerts: AlertRaiser;
  containers: ServiceContainers;
  /** The strategy of an id, or null when it is not (yet) built. */
  strategy(id: string): Strategy | null;
  /** A target for a stored spec and its opened secret (null for local). */
  target(spec: TargetSpec, secret: string | null): Target;
  /** Sundeck's own state as a source (configs with strategy `state`). */
  stateSource?: BackupSource;
  /** Whether the app is stopped on purpose (recovery then leaves its containers stopped). */
  appStopped?: (slug: string) => boolean;
  /** The compose services of an app, or null when there is no such app. */
  services(slug: string): string[] | null;
  /** What an app's services hold; empty until detection is built. */
  detect?: (slug: string) => Promise<DetectedStrategy[]>;
  /** Waits for the app's lock (no deploy or lifecycle action meanwhile); returns its release. */
  lock(slug: string): Promise<() => void>;
  /** Where temp files (uploads) go, 0700. */
  tmpDir: string;
  maxRestoreBytes: number;
  maxConcurrentRestores: number;
  /** Resolves once recovery at start is over; runs and restores wait for it before touching anything. */
  ready?: () => Promise<void>;
  /** Hook deadline (15 min). */
  hookTimeoutMs?: number;
  /** Runs that dump at once server-wide (default {@link MAX_CONCURRENT_RUNS}); the others wait their turn. */
  maxConcurrentRuns?: number;
}

/**
 * Runs that dump at once server-wide: many configs due at the same minute (50 per app may be) queue instead of
 * loading a small server with as many dumps and gzip streams at once.
 */
export const MAX_CONCURRENT_RUNS = 2;

/** The target a config writes to, its secret opened. */
export function configTarget(d: Pick<BackupDeps, "target" | "secrets">, c: ConfigRow): Target {
  return d.target(specOf(c.targetKind, c.targetJson), c.secretEnc ? d.secrets.open(c.secretEnc) : null);
}

/** A stored target spec from its kind and JSON. */
export function specOf(kind: string, json: string): TargetSpec {
  const o = JSON.parse(json || "{}") as Omit<TargetSpec, "kind">;
  return { ...o, kind: kind === "s3" ? "s3" : "local" };
}
