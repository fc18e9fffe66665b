/**
 * The reconciler: the apps directory is the desired state. New directories deploy, changed compose or .env files
 * redeploy, removed directories are taken down (volumes kept), and deploys a crash interrupted run again. A debounced
 * watcher reacts within a second; a periodic pass catches anything a watch event missed.
 */
import { existsSync, type FSWatcher, watch } from "node:fs";
import { ensurePrivateDir } from "../lib/fs";
import type { Log } from "../log/logger";
import type { Actor } from "../modules/activity/model";
import type { AppFilesStore } from "../modules/apps/files";
import type { AppRepo } from "../modules/apps/repo";
import type { StatusBoard } from "../modules/apps/status";
import type { DeployRepo } from "../modules/deploys/repo";
import type { Deployer } from "../modules/deploys/service";
import { isSlug, SLUG_RULE } from "../shared/slug";

/** Changes made by dropping files into the apps directory. */
export const FILES_ACTOR: Actor = Object.freeze({ userId: null, name: "apps-dir", source: "system", ip: null });

export interface ReconcilerDeps {
  files: AppFilesStore;
  repo: AppRepo;
  /** What the reconciler reads of the deploy journal: the version last attempted. */
  journal: Pick<DeployRepo, "version">;
  deployer: Deployer;
  status: StatusBoard;
  log: Log;
  /** Full pass interval. */
  everyMs?: number;
  /** Quiet time after the last file event of an app before acting on it. */
  debounceMs?: number;
}

/** Build the reconciler. */
export function createReconciler(d: ReconcilerDeps) {
  const log = d.log;
  const force = new Set<string>();
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  let watcher: FSWatcher | undefined;
  let interval: ReturnType<typeof setInterval> | undefined;
  let passing: Promise<void> | null = null;
  let stopped = false;
  const warned = new Set<string>();

  /** One warning per directory whose name cannot be an app's, naming the rule. */
  const warnIgnored = (name: string) => {
    if (warned.has(name)) return;
    warned.add(name);
    log.warn("ignoring a directory of the apps directory: its name is not a valid app name", {
      dir: name,
      rule: SLUG_RULE,
    });
  };

  /** Bring one app in line with its directory. */
  const ensure = async (slug: string): Promise<void> => {
    const release = await d.deployer.locks.acquire(slug);
    let handedOver = false;
    try {
      if (stopped) return;
      // a directory whose name is not a slug is never deployed (an app of that name from an older build goes)
      const valid = isSlug(slug);
      if (!valid && existsSync(d.files.composePath(slug))) warnIgnored(slug);
      const files = valid ? d.files.read(slug) : null;
      const app = d.repo.bySlug(slug);
      if (!files) {
        if (app && !app.removedAt) {
          log.info("app directory removed: taking it down", { app: slug });
          handedOver = true;
          d.deployer.teardown(slug, FILES_ACTOR, release);
        }
        return;
      }
      const attempted = app?.attemptedVersionId ? d.journal.version(app.attemptedVersionId) : undefined;
      const reason =
        !app || app.removedAt
          ? "new app"
          : force.has(slug)
            ? "interrupted deploy"
            : attempted?.hash !== files.hash
              ? "files changed"
              : drift(slug);
      if (!reason) return;
      force.delete(slug);
      log.info("reconciling", { app: slug, reason });
      handedOver = true;
      await d.deployer.deployFromFiles(slug, { actor: FILES_ACTOR, source: "file" }, release);
    } catch (e) {
      log.error("reconcile failed", { app: slug, error: (e as Error).message });
    } finally {
      if (!handedOver) release();
    }
  };

  /** A running app whose containers are all gone (removed by hand, lost by the engine) is brought back. */
  const drift = (slug: string): string | null => {
    const app = d.repo.bySlug(slug)!;
    if (app.stopped || app.lastDeployStatus !== "succeeded" || !d.status.up) return null;
    return d.status.containers(slug).length === 0 ? "containers missing" : null;
  };

  /** One pass over every app directory and every known app. */
  const pass = (): Promise<void> =>
    (passing ??= (async () => {
      try {
        await d.status.refresh();
        const present = new Set(d.files.list());
        for (const name of d.files.ignored()) warnIgnored(name);
        const known = d.repo
          .list()
          .filter((a) => !a.removedAt)
          .map((a) => a.slug);
        for (const slug of new Set([...present, ...known])) await ensure(slug);
      } finally {
        passing = null;
      }
    })());

  const onEvent = (_event: string, filename: string | Buffer | null) => {
    const name = filename?.toString() ?? "";
    const slug = name.split("/")[0];
    if (!slug) return;
    clearTimeout(timers.get(slug));
    timers.set(
      slug,
      setTimeout(() => {
        timers.delete(slug);
        void ensure(slug);
      }, d.debounceMs ?? 400),
    );
  };

  return {
    ensure,
    pass,

    /** Finish interrupted writes and deploys, reconcile everything, then watch. */
    async start(): Promise<void> {
      ensurePrivateDir(d.files.appsDir);
      const rewritten = d.files.recover();
      if (rewritten.length) log.info("finished interrupted writes", { apps: rewritten.join(",") });
      for (const slug of d.deployer.recoverInterrupted()) force.add(slug);
      if (force.size) log.info("deploys were interrupted: running them again", { apps: [...force].join(",") });
      // before anything deploys again: a rolling deploy a crash cut short leaves one set of containers, not two
      try {
        await d.deployer.convergeRollouts();
      } catch (e) {
        log.error("converging interrupted rolling deploys failed", { error: (e as Error).message });
      }
      if (stopped) return;
      try {
        watcher = watch(d.files.appsDir, { recursive: true }, onEvent);
        watcher.on("error", (e) => log.warn("apps directory watch failed", { error: e.message }));
      } catch (e) {
        log.warn("cannot watch the apps directory; relying on periodic passes", { error: (e as Error).message });
      }
      interval = setInterval(() => void pass(), d.everyMs ?? 30_000);
      interval.unref?.();
      await pass();
    },

    stop(): void {
      stopped = true;
      watcher?.close();
      clearInterval(interval);
      for (const t of timers.values()) clearTimeout(t);
    },
  };
}

export type Reconciler = ReturnType<typeof createReconciler>;
