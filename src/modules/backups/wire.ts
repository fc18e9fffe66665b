/**
 * Building `ctx.backups` from the composition root's parts: the real targets (local under `<data_dir>/backups`, S3),
 * the Engine API for containers, Sundeck's own state as a source, the app's compose services and its deploy lock.
 */
import { join } from "node:path";
import type { ComposeProject } from "../../compose/model";
import type { Config } from "../../config/schema";
import type { Db } from "../../db";
import type { DockerHandle } from "../../docker/types";
import type { Secrets } from "../../lib/crypto";
import type { Clock } from "../../lib/time";
import type { LogSink } from "../../log/logger";
import type { BackupTarget } from "../../shared/backups";
import type { Activity } from "../activity/service";
import type { AppRepo } from "../apps/repo";
import type { AppViews } from "../apps/view";
import { createServiceContainers } from "./containers";
import type { AlertRaiser, BackupDeps } from "./deps";
import { createBackupRepo } from "./repo";
import { createBackups } from "./service";
import { createStateSource } from "./state";
import { type AppStrategy, createStrategies, detectStrategies, factsFromCompose } from "./strategies";
import { createLocalTarget, createTarget } from "./targets";

export interface BackupWiring {
  config: Readonly<Config>;
  db: Db;
  clock: Clock;
  logs: LogSink;
  secrets: Secrets;
  activity: Activity;
  alerts: AlertRaiser;
  docker: DockerHandle;
  appRepo: AppRepo;
  appViews: AppViews;
  /** The deploy lock of an app (deployer.locks.acquire). */
  lock(slug: string): Promise<() => void>;
  /** The compose project an app runs (or its files before any deploy), checked; null when none parses. */
  project(slug: string): ComposeProject | null;
  /** Replacements of what surrounds the domain (tests: a fake strategy or containers). */
  override?: Partial<Pick<BackupDeps, "strategy" | "containers">>;
}

/** Build the backups service with its real parts. */
export function wireBackups(w: BackupWiring) {
  const log = w.logs.logger("backups");
  const localDir = join(w.config.data_dir, "backups");
  const tmpDir = join(w.config.data_dir, "tmp");
  // the engine is known once the server has detected Docker: strategies are built on first use
  let strategies: Record<string, AppStrategy> | null = null;
  const strategy = (id: string) => {
    if (!w.docker.engine) return null;
    strategies ??= createStrategies({ engine: w.docker.engine, tmpDir });
    return strategies[id] ?? null;
  };
  const deps: BackupDeps = {
    db: w.db,
    clock: w.clock,
    log,
    repo: createBackupRepo(w.db),
    secrets: w.secrets,
    alerts: w.alerts,
    containers: createServiceContainers(w.docker),
    strategy,
    target: (spec, secret) => createTarget({ ...spec, secret_key: secret ?? "" } as BackupTarget, { localDir }),
    stateSource: createStateSource({ db: w.db, dataDir: w.config.data_dir, log }),
    appStopped: (slug) => Boolean(w.appRepo.bySlug(slug)?.stopped),
    services(slug) {
      const app = w.appRepo.bySlug(slug);
      return app ? w.appViews.view(app).services.map((s) => s.name) : null;
    },
    detect: async (slug) => {
      const p = w.project(slug);
      return p ? detectStrategies(p.services.map((s) => factsFromCompose(s, p.doc))) : [];
    },
    lock: w.lock,
    tmpDir,
    maxRestoreBytes: w.config.backups.max_restore_bytes,
    maxConcurrentRestores: w.config.backups.max_concurrent_restores,
    ...w.override,
  };
  return createBackups({ ...deps, activity: w.activity, sweepLocal: () => createLocalTarget({ dir: localDir }).sweepTemp() });
}
