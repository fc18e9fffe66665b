/**
 * The git sync worker of one configuration: one cycle at a time, requests arriving meanwhile merged into the next
 * (a burst of changes is one commit), a debounce after recorded changes, and the poll loop. It runs in the
 * background: nothing here is awaited by a request.
 */
import { join } from "node:path";
import type { Ctx } from "../../context";
import { parseDuration } from "../../lib/duration";
import { type GitSyncSettings, limitsOf } from "./config";
import { attach, type CycleRequest, runCycle } from "./cycle";
import { allowed } from "./files/paths";
import { type GitRepo, GitSyncError, openRepo } from "./repo";
import { authFor } from "./repo/auth";
import type { SyncStatus } from "./status";

/** Quiet time after a recorded change before the push cycle (changes made together become one commit). */
export const PUSH_DEBOUNCE_MS = 1_000;
/** The shortest poll interval taken from the config file (the API refuses less than 5 s). */
const MIN_POLL_MS = 1_000;

export interface WorkerDeps {
  ctx: Ctx;
  cfg: GitSyncSettings;
  status: SyncStatus;
  debounceMs?: number;
}

/** Where the git directory lives (repo/README: out of apps_dir). */
export const gitDirOf = (dataDir: string) => join(dataDir, "git", "repo");

/** Build a worker; `start` begins with the first contact and the poll loop. */
export function createWorker(d: WorkerDeps) {
  const { ctx, cfg, status } = d;
  const log = ctx.logs.logger("gitsync");
  let repo: GitRepo | null = null;
  let attached = false;
  let stopped = false;
  let want: CycleRequest | null = null;
  let running: Promise<void> | null = null;
  let debounce: ReturnType<typeof setTimeout> | undefined;
  let poll: ReturnType<typeof setInterval> | undefined;

  const once = async (req: CycleRequest) => {
    if (!repo) {
      try {
        repo = await openRepo({
          workTree: ctx.config.apps_dir,
          gitDir: gitDirOf(ctx.config.data_dir),
          remote: cfg.remote,
          auth: authFor(cfg, ctx.config.data_dir),
          branch: cfg.branch,
          allowed,
          limits: limitsOf(cfg),
        });
      } catch (e) {
        status.failed(e instanceof GitSyncError ? e.message : `git sync cannot open its repository: ${(e as Error).message}`);
        return;
      }
      if (repo.remoteUrl.startsWith("http://"))
        log.warn("git sync remote is plain http: the token and the configuration travel unencrypted", { remote: repo.remoteUrl });
    }
    if (!attached) {
      attached = await attach({ ctx, repo, cfg, status });
      if (!attached) return;
    }
    await runCycle({ ctx, repo, cfg, status }, req);
  };

  const pump = () => {
    if (running || stopped || !want) return;
    running = (async () => {
      while (want && !stopped) {
        const req = want;
        want = null;
        status.setRunning(true);
        try {
          await once(req);
        } catch (e) {
          // runCycle reports its own errors; this is a bug guard so the loop never dies
          log.error("git sync worker error", { error: (e as Error).message });
          status.failed(`git sync failed: ${(e as Error).message}`);
        } finally {
          status.setRunning(false);
        }
      }
    })().finally(() => {
      running = null;
      pump();
    });
  };

  /** Ask for a cycle (merged with one already asked for). */
  const request = (r: Partial<CycleRequest> = {}) => {
    if (stopped) return;
    want = { fetch: !!(want?.fetch || r.fetch), apply: !!(want?.apply || r.apply) };
    pump();
  };

  return {
    request,

    /** A change was recorded: push after a short quiet time. */
    changed() {
      if (stopped) return;
      clearTimeout(debounce);
      debounce = setTimeout(() => request(), d.debounceMs ?? PUSH_DEBOUNCE_MS);
      debounce.unref?.();
    },

    start() {
      request({ fetch: true });
      if (cfg.poll_enabled) {
        // the file's schema takes any duration: never poll in a tight loop
        poll = setInterval(() => request({ fetch: true }), Math.max(parseDuration(cfg.poll_interval) ?? 60_000, MIN_POLL_MS));
        poll.unref?.();
      }
    },

    /** Stop timers, let a running cycle end, and wait for the repository to be idle. */
    async stop() {
      stopped = true;
      clearTimeout(debounce);
      clearInterval(poll);
      await running;
      await repo?.idle();
    },
  };
}

export type Worker = ReturnType<typeof createWorker>;
