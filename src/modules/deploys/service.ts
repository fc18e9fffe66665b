/**
 * The entry points of deploys: every path (API, CLI, file drop, rollback) ends here. Content is checked before
 * anything is written, then deployed as one operation per app (queued behind a running one), journaled as a
 * version, and a failed deploy is rolled back to the last good version unless that is turned off.
 */

import { ComposeError } from "../../compose/model";
import type { Prepared } from "../../compose/prepare";
import type { Db } from "../../db";
import type { DockerLayer } from "../../docker";
import { HttpError, notFound } from "../../lib/errors";
import { type Clock, iso } from "../../lib/time";
import type { Log } from "../../log/logger";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import { requireApp } from "../apps/lookup";
import type { AppRepo, AppRow } from "../apps/repo";
import { type ComposeRunDeps, createComposeRun } from "./compose-run";
import { appEntry, createJournal } from "./journal";
import { createLifecycle } from "./lifecycle";
import { createOperations, type Job } from "./operations";
import type { DeployOutput } from "./output";
import type { DeployRepo } from "./repo";

export { DockerDown } from "./compose-run";
export type { Action } from "./operations";

/** What the deployer needs: the compose runner's dependencies, and the journal, activity and output around them. */
export interface DeployerDeps extends Omit<ComposeRunDeps, "journal" | "docker"> {
  db: Db;
  clock: Clock;
  log: Log;
  activity: Activity;
  apps: AppRepo;
  repo: DeployRepo;
  docker: DockerLayer;
  output: DeployOutput;
}

interface DeployOptions {
  actor: Actor;
  source: string;
  pullAll?: boolean;
  autoRollback?: boolean;
}

/** Build the deployer. */
export function createDeployer(d: DeployerDeps) {
  const now = () => iso(d.clock.now());
  const ops = createOperations({ apps: d.apps, journal: d.repo, output: d.output, log: d.log, now });
  const run = createComposeRun({ ...d, journal: d.repo });
  const journal = createJournal({ db: d.db, apps: d.apps, repo: d.repo, activity: d.activity, secrets: d.secrets, run, now });
  const lifecycle = createLifecycle({ ...d, ops, run, now });

  /** Check content: the safety rules, then the registries its label names (which must exist). */
  const check = (slug: string, compose: string, envText: string): Prepared => {
    const p = run.prepare(slug, compose, envText);
    const unknown = p.labels.registries ? d.registries.unknown(p.labels.registries) : [];
    if (unknown.length)
      throw new ComposeError(
        null,
        "registries",
        `sundeck.registries names ${unknown.map((n) => JSON.stringify(n)).join(", ")}: no such registry`,
      );
    return p;
  };

  /** Docker, once its detection at start is over (work that arrives meanwhile waits), or a 503 with the reason. */
  const dockerReady = async () => {
    await d.docker.settled();
    return run.docker();
  };

  /** Ensure the app row exists (recording its creation) and is not marked removed. */
  const ensureApp = (slug: string, actor: Actor): AppRow => {
    const existing = d.apps.bySlug(slug);
    if (existing && !existing.removedAt) return existing;
    return d.db.tx(() => {
      // a removed app made again is a new app: it forgets the template it was made from
      const app = existing
        ? d.apps.update(existing.id, { removedAt: null, templateJson: null }, now())
        : d.apps.create(slug, now());
      appEntry(d.activity, app, {
        actor,
        category: "lifecycle",
        action: "created",
        target: slug,
        summary: existing ? `app ${slug} is back (its directory returned)` : `${actor.name} created app ${slug}`,
      });
      return app;
    });
  };

  /** The deploy job for whatever the app's files hold when it runs (`write` first puts new content there). */
  const deployFiles =
    (o: DeployOptions, write?: { compose: string; env: string }): Job =>
    async (rc) => {
      const slug = rc.app.slug;
      if (write) d.files.write(slug, write.compose, write.env);
      const files = d.files.read(slug);
      if (!files) throw new Error("the app has no docker-compose.yml");
      let prepared: Prepared | null = null;
      let prepError: string | null = null;
      try {
        prepared = check(slug, files.compose, files.env);
      } catch (e) {
        prepError = e instanceof HttpError ? (e.reason ?? e.message) : (e as Error).message;
      }
      const version = journal.record(rc.app, files, o.source, o.actor, prepared?.project ?? null);
      d.apps.update(rc.app.id, { attemptedVersionId: version.id }, now());
      d.repo.setDeployVersion(rc.deployId, version.id);
      rc.line("up", `deploying ${slug} version ${version.version}`);
      const result = prepError
        ? { error: prepError, touched: false }
        : await run.runVersion(rc, prepared!, { pullAll: !!o.pullAll });
      const error = result.error;
      if (error) {
        rc.line("up", `deploy failed: ${error}`);
        // the reason in the process log too: a folder drop has no caller to answer
        d.log.warn("deploy failed", { app: slug, version: version.version, source: o.source, error });
      }
      // an explicit rollback is recorded as one (rolled_back / rollback_failed), like the automatic kind
      journal.settle(rc, version, error, o.actor, o.source === "rollback" ? "rollback" : "deploy");
      // containers untouched (refused content, failed pull) still run the good version: nothing to roll back
      if (error && result.touched && o.autoRollback !== false) await journal.autoRollback(rc, version, o.actor);
      d.output.end(slug, "up", error ? `deploy failed: ${error}` : `deployed version ${version.version}`);
    };

  /** A lifecycle action that first waits for Docker detection to be over. */
  const afterDetection =
    <A extends unknown[], R>(f: (...a: A) => R) =>
    async (...a: A): Promise<R> => {
      await d.docker.settled();
      return f(...a);
    };

  return {
    stop: afterDetection(lifecycle.stop),
    start: afterDetection(lifecycle.start),
    restart: afterDetection(lifecycle.restart),
    scale: afterDetection(lifecycle.scale),
    remove: afterDetection(lifecycle.remove),
    /** The app's directory went away (the reconciler holds the lock and hands it over). */
    teardown: lifecycle.teardown,

    /** The per-app locks (the reconciler holds one while it reads an app's directory). */
    locks: ops.locks,

    /** Whether an operation runs for the app. */
    busy: ops.busy,

    /** Check content without deploying it (400 with the service and rule when unsafe). */
    validate: check,

    /**
     * Deploy new content (API and CLI): checked first (nothing is written when it is refused), then written to the
     * apps directory when its turn comes and deployed in the background. 409 while another operation waits.
     */
    async submit(slug: string, compose: string, envText: string, o: DeployOptions) {
      check(slug, compose, envText);
      ops.admit(slug);
      await dockerReady();
      ensureApp(slug, o.actor);
      return ops.launch(slug, "deploy", o.source, deployFiles(o, { compose, env: envText }));
    },

    /** Deploy what the files hold (reconciler, env change); waits for the lock (or uses one the caller holds). */
    async deployFromFiles(slug: string, o: DeployOptions, held?: () => void) {
      const release = held ?? (await ops.locks.acquire(slug));
      try {
        await d.docker.settled();
        ensureApp(slug, o.actor);
      } catch (e) {
        release();
        throw e;
      }
      return ops.launch(slug, "deploy", o.source, deployFiles(o), { held: release });
    },

    /** Write that version's content back as the desired state and deploy it. */
    async rollback(slug: string, versionId: number, actor: Actor) {
      const app = requireApp(d.apps, slug);
      const v = d.repo.version(versionId);
      if (!v || v.appId !== app.id) throw notFound();
      const env = d.secrets.open(v.envSealed);
      check(slug, v.compose, env);
      ops.admit(slug);
      await dockerReady();
      const job = deployFiles({ actor, source: "rollback" }, { compose: v.compose, env });
      return ops.launch(slug, "rollback", "rollback", job, { versionId: v.id });
    },

    async pull(slug: string, actor: Actor) {
      requireApp(d.apps, slug);
      await dockerReady();
      return ops.launch(slug, "pull", actor.source, deployFiles({ actor, source: actor.source, pullAll: true }));
    },

    /** Cancel the app's running operation and the one waiting; records what it cancelled. */
    cancel(slug: string, actor: Actor) {
      const app = requireApp(d.apps, slug);
      const c = ops.cancel(slug);
      const what = [c.running, c.waiting].filter(Boolean).join(" and the waiting ");
      if (what) {
        d.log.info("cancel requested", { app: slug, by: actor.name });
        appEntry(d.activity, app, {
          actor,
          category: "lifecycle",
          action: "cancelled",
          target: slug,
          summary: `${actor.name} cancelled the ${what} of ${slug}`,
        });
      }
      return c;
    },

    recoverInterrupted: ops.recoverInterrupted,
    /** After a restart, before anything deploys: rolling deploys a crash cut short converge (rollout.ts). */
    async convergeRollouts(): Promise<void> {
      if (!d.rollouts?.pending()) return;
      await d.docker.settled();
      const engine = d.docker.engine;
      if (engine && d.rollouts) await d.rollouts.converge(engine);
    },
    drain: ops.drain,
  };
}

export type Deployer = ReturnType<typeof createDeployer>;
