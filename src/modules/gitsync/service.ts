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
import type { CycleRequest } from "./cycle";
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
  // what was asked (a push notification, sync-now) while no worker runs yet: the server starts git sync after it
  // answers, and a worker is replaced on a config change; the next worker takes it
  let queued: CycleRequest | null = null;

  const enabled = () => current.config.enabled;

  /** Ask the worker for a cycle, or keep the request for the worker about to start. */
  const ask = (r: CycleRequest) => {
    if (worker) return worker.request(r);
    queued = { fetch: !!(queued?.fetch || r.fetch), apply: !!(queued?.apply || r.apply) };
  };

  /** Stop the worker of the old configuration (its cycle ends first), then start one for the new. */
  const restart = (): Promise<void> =>
    (switching = switching.then(async () => {
      await worker?.stop();
      worker = null;
      if (!started) return;
      if (!current.config.enabled) {
        queued = null;
        status.reset(true);
        return;
      }
      // never "disabled" while on: until the first contact ends, the status says a cycle runs
      if (status.state === "disabled") status.reset(false);
      worker = createWorker({ ctx, cfg: current.config, status, debounceMs: opts.debounceMs });
      worker.start();
      if (queued) worker.request(queued);
      queued = null;
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
      if (!enabled()) throw conflict(NOT_ENABLED);
      ask({ fetch: true, apply: false });
    },

    /** Apply the counted remote commits; false when already up to date (nothing queued). */
    applyPending(): boolean {
      if (!enabled()) throw conflict(NOT_ENABLED);
      if (status.behindBy === 0 && status.state !== "behind") return false;
      ask({ fetch: true, apply: true });
      return true;
    },

    /**
     * The webhook secret when the webhook is available (git sync on, webhook on, a secret set), else null. Decided by
     * the configuration alone, from the first request on: a push that arrives before the worker runs is judged, and
     * queued for it.
     */
    webhookSecret(): string | null {
      const c: GitSyncSettings = current.config;
      return c.enabled && c.webhook_enabled && c.webhook_secret ? c.webhook_secret : null;
    },

    /** A push notification arrived (signature checked): sync now. */
    notified(): void {
      ask({ fetch: true, apply: false });
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
      queued = null;
      await restart();
    },
  };
}

export type GitSync = ReturnType<typeof createGitSync>;
