/**
 * Git sync for the rest of the server: the configuration in force (file, or what a super-admin stored), the status,
 * the worker's lifecycle (restarted when the configuration changes), and the triggers (changes, sync-now,
 * apply-pending, webhook). No Elysia here.
 */
import type { Ctx } from "../../context";
import { conflict } from "../../lib/errors";
import type { GitSyncConfig, GitSyncConfigView, GitSyncStatus } from "../../shared/git-sync";
import type { Actor } from "../activity/model";
import { createGitSyncConfig, type GitSyncSettings, masked } from "./config";
import { createStatus } from "./status";
import { createWorker, type Worker } from "./worker";

export interface GitSyncOptions {
  /** Quiet time after a recorded change before a push (tests shorten it). */
  debounceMs?: number;
}

const NOT_ENABLED = "git sync is not enabled";

/** Build the git sync service; `start` (server only) runs the worker. */
export function createGitSync(ctx: Ctx, opts: GitSyncOptions = {}) {
  const store = createGitSyncConfig(ctx);
  const status = createStatus(ctx.db, ctx.clock);
  const log = ctx.logs.logger("gitsync");
  let current = store.effective();
  let worker: Worker | null = null;
  let started = false;
  let switching: Promise<void> = Promise.resolve();

  const enabled = () => current.config.enabled;

  /** Stop the worker of the old configuration (its cycle ends first), then start one for the new. */
  const restart = (): Promise<void> =>
    (switching = switching.then(async () => {
      await worker?.stop();
      worker = null;
      if (!started) return;
      if (!current.config.enabled) {
        status.reset(true);
        return;
      }
      // never "disabled" while on: until the first contact ends, the status says a cycle runs
      if (status.state === "disabled") status.reset(false);
      worker = createWorker({ ctx, cfg: current.config, status, debounceMs: opts.debounceMs });
      worker.start();
      log.info("git sync worker started", { branch: current.config.branch, source: current.source });
    }));

  return {
    /** Whether git sync is on (syncable activity entries then start pending). */
    enabled,

    /** The configuration in force with secrets masked (GET /api/git/config). */
    config: (): GitSyncConfigView => store.view(),

    /** Store a new configuration (super-admin), record it, and restart the worker with it. */
    putConfig(body: Partial<GitSyncConfig>, actor: Actor): GitSyncConfigView {
      ctx.db.tx(() => {
        const { before, after } = store.put(body);
        ctx.activity.record({
          actor,
          category: "system",
          action: "git_sync_config_changed",
          target: "git_sync",
          summary: `${actor.name} changed the git sync configuration (${after.enabled ? "enabled" : "disabled"})`,
          before: masked(before),
          after: masked(after),
        });
        if (before.remote !== after.remote || before.branch !== after.branch) status.reset(!after.enabled);
      });
      current = store.effective();
      void restart();
      return store.view();
    },

    status: (): GitSyncStatus => status.view(enabled()),

    /** Fetch (and apply, unless fetch-only) now; throws 409 while git sync is off. */
    syncNow(): void {
      if (!worker) throw conflict(NOT_ENABLED);
      worker.request({ fetch: true });
    },

    /** Apply the counted remote commits; false when already up to date (nothing queued). */
    applyPending(): boolean {
      if (!worker) throw conflict(NOT_ENABLED);
      if (status.behindBy === 0 && status.state !== "behind") return false;
      worker.request({ fetch: true, apply: true });
      return true;
    },

    /** The webhook secret when the webhook is available (git sync on, webhook on, a secret set), else null. */
    webhookSecret(): string | null {
      const c: GitSyncSettings = current.config;
      return c.enabled && c.webhook_enabled && c.webhook_secret && worker ? c.webhook_secret : null;
    },

    /** A push notification arrived (signature checked): sync now. */
    notified(): void {
      worker?.request({ fetch: true });
    },

    /** Activity recorded a pending entry: push after the debounce. */
    changed(): void {
      worker?.changed();
    },

    /** Start the worker when git sync is on (the server calls this once). */
    start(): Promise<void> {
      started = true;
      return restart();
    },

    /** Stop the worker; a running cycle finishes first. */
    async stop(): Promise<void> {
      started = false;
      await restart();
    },
  };
}

export type GitSync = ReturnType<typeof createGitSync>;
