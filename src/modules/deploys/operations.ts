/**
 * Running operations: one per app at a time and at most one more waiting its turn (a third is refused, naming what
 * runs). Each is journaled in the deploys table when accepted, streamed to deploy-logs, cancellable, drained on
 * shutdown, and marked interrupted when a crash cut it short.
 */
import { conflict, HttpError } from "../../lib/errors";
import type { Log } from "../../log/logger";
import type { AppRepo, AppRow } from "../apps/repo";
import { AppLocks, type Release } from "./locks";
import type { DeployFrame, DeployOutput } from "./output";
import type { DeployRepo } from "./repo";

export type Action = "deploy" | "pull" | "rollback" | "start" | "stop" | "restart" | "scale" | "remove";

/** What a running job gets: its app, its journal row, its cancel signal and its output. */
export interface RunCtx {
  app: AppRow;
  deployId: number;
  signal: AbortSignal;
  line: (action: DeployFrame["action"], text: string) => void;
}

export type Job = (rc: RunCtx) => Promise<void>;

export interface OperationsDeps {
  apps: AppRepo;
  journal: DeployRepo;
  output: DeployOutput;
  log: Log;
  now: () => string;
}

interface Op {
  action: Action;
  deployId: number;
  ac: AbortController;
}

/** What `cancel` stopped: the running operation's action and the waiting one's, each null when there was none. */
export interface Cancelled {
  running: Action | null;
  waiting: Action | null;
}

/** Build the operation runner. */
export function createOperations(d: OperationsDeps) {
  const locks = new AppLocks();
  const running = new Map<string, Op>();
  const waiting = new Map<string, Op>();
  const inflight = new Set<Promise<void>>();

  const busyText = (slug: string) => {
    const r = running.get(slug);
    const w = waiting.get(slug);
    return `${slug} is busy: ${r ? `${r.action} is running` : "an operation is running"}${w ? ` and ${w.action} is waiting` : ""}`;
  };

  const admit = (slug: string) => {
    if (waiting.has(slug)) throw conflict(busyText(slug));
  };

  const track = (p: Promise<void>) => {
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
    return p;
  };

  /** Run `job` now under the held lock; always releases it and always ends the app's output. */
  const run = async (slug: string, op: Op, release: Release, job: Job): Promise<void> => {
    running.set(slug, op);
    try {
      const app = d.apps.bySlug(slug);
      if (!app || app.removedAt) {
        d.journal.finishDeploy(op.deployId, "cancelled", "the app was removed", d.now());
        return;
      }
      d.output.begin(slug);
      await job({ app, deployId: op.deployId, signal: op.ac.signal, line: (a, text) => d.output.line(slug, a, text) });
    } catch (e) {
      const msg = e instanceof HttpError ? (e.reason ?? e.message) : (e as Error).message;
      d.log.error("operation failed", { app: slug, action: op.action, error: msg });
      d.journal.finishDeploy(op.deployId, "failed", msg, d.now());
      d.output.end(slug, "none", `failed: ${msg}`);
    } finally {
      running.delete(slug);
      release();
      if (d.output.active(slug)) d.output.end(slug, "none", "finished");
    }
  };

  return {
    locks,

    /** Whether an operation runs (or holds the app) now. */
    busy: (slug: string) => locks.busy(slug),

    /** Refuse (409 naming what runs and waits) when the app already has an operation waiting its turn. */
    admit,

    /**
     * Journal the operation and run `job` in the background: at once when the app is free (or the caller holds its
     * lock), else after the running one, saying so in the app's deploy output. 409 when one already waits.
     */
    launch(
      slug: string,
      action: Action,
      source: string,
      job: Job,
      o: { versionId?: number | null; held?: Release | null } = {},
    ): { deployId: number; finished: Promise<void> } {
      const release = o.held ?? locks.tryAcquire(slug);
      if (!release) admit(slug);
      let deployId: number;
      try {
        const app = d.apps.bySlug(slug)!;
        deployId = d.journal.insertDeploy({ appId: app.id, versionId: o.versionId ?? null, action, source, now: d.now() }).id;
      } catch (e) {
        release?.();
        throw e;
      }
      const op: Op = { action, deployId, ac: new AbortController() };
      if (release) return { deployId, finished: track(run(slug, op, release, job)) };

      waiting.set(slug, op);
      const ahead = running.get(slug);
      d.output.line(slug, "none", `${action} waits for ${ahead ? ahead.action : "the running operation"} to finish`);
      const finished = (async () => {
        const rel = await locks.acquire(slug);
        waiting.delete(slug);
        if (op.ac.signal.aborted) {
          d.journal.finishDeploy(deployId, "cancelled", "cancelled", d.now());
          rel();
          return;
        }
        await run(slug, op, rel, job);
      })();
      return { deployId, finished: track(finished) };
    },

    /** Cancel the app's running operation and the one waiting; returns what was cancelled. */
    cancel(slug: string): Cancelled {
      const r = running.get(slug);
      const w = waiting.get(slug);
      r?.ac.abort();
      w?.ac.abort();
      return { running: r?.action ?? null, waiting: w?.action ?? null };
    },

    /** The end of a lifecycle job: journal its outcome, keep its error on the app, and send the final frame. */
    finish(rc: RunCtx, action: DeployFrame["action"], error: string | null): void {
      const status = error === null ? "succeeded" : error === "cancelled" ? "cancelled" : "failed";
      d.journal.finishDeploy(rc.deployId, status, error, d.now());
      if (error) {
        d.apps.update(rc.app.id, { lastError: error }, d.now());
        d.log.warn("action failed", { app: rc.app.slug, action, error });
      }
      d.output.end(rc.app.slug, action, error ? `failed: ${error}` : "done");
    },

    /** Mark deploys a crash left running as interrupted; returns their apps (to deploy again). */
    recoverInterrupted(): string[] {
      const slugs = new Set<string>();
      for (const dep of d.journal.running()) {
        d.journal.finishDeploy(dep.id, "interrupted", "interrupted: sundeck stopped during the operation", d.now());
        const app = d.apps.byId(dep.appId);
        if (app) slugs.add(app.slug);
      }
      return [...slugs];
    },

    /**
     * Shutdown: let operations finish for `graceMs`, then cancel the rest (waiting ones included) and wait for them
     * to record how they ended (an operation cut short is run again at the next start).
     */
    async drain(graceMs: number): Promise<void> {
      if (inflight.size === 0) return;
      const all = Promise.allSettled([...inflight]);
      const timedOut = await Promise.race([
        all.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), graceMs)),
      ]);
      if (!timedOut) return;
      d.log.warn("shutdown: cancelling operations still running", { apps: [...running.keys()].join(",") });
      for (const op of [...running.values(), ...waiting.values()]) op.ac.abort();
      await Promise.race([all, new Promise((r) => setTimeout(r, 15_000))]);
    },
  };
}

export type Operations = ReturnType<typeof createOperations>;
