/**
 * Deploys and lifecycle actions. Every path (API, CLI, file drop, rollback) ends here: one operation per app at a
 * time, each journaled in the deploys table, streamed to deploy-logs, recorded in activity, and a failed deploy
 * rolled back to the last good version unless that is turned off.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { diffCompose } from "../../compose/diff";
import { parseEnvFile } from "../../compose/envfile";
import { parseAppLabels } from "../../compose/labels";
import type { AppLabels, ComposeProject } from "../../compose/model";
import { parseCompose } from "../../compose/parse";
import { expectation, type Prepared, prepare } from "../../compose/prepare";
import { scalability } from "../../compose/scaling";
import type { Db } from "../../db";
import { PUBLIC_NETWORK, projectName } from "../../docker/naming";
import type { DockerHandle, Engine, ProjectRef, RunResult } from "../../docker/types";
import type { Secrets } from "../../lib/crypto";
import { badRequest, conflict, HttpError, notFound } from "../../lib/errors";
import { writeFileAtomic } from "../../lib/fs";
import { type Clock, iso } from "../../lib/time";
import type { Log } from "../../log/logger";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import type { AppFilesStore } from "../apps/files";
import type { AppRepo, AppRow, VersionRow } from "../apps/repo";
import type { Registries } from "../registries/service";
import { imageRegistry } from "../registries/service";
import { diffEndpoints } from "./endpoint-diff";
import { AppLocks } from "./locks";
import type { DeployFrame, DeployOutput } from "./output";

import { waitStable } from "./stabilize";

export interface DeployerDeps {
  db: Db;
  clock: Clock;
  log: Log;
  activity: Activity;
  repo: AppRepo;
  files: AppFilesStore;
  docker: DockerHandle;
  registries: Registries;
  secrets: Secrets;
  output: DeployOutput;
  appsDir: string;
  dataDir: string;
  /** `compose.allowed_host_paths` of the server config. */
  allowedHostPaths: string[];
  /** Registry names applied to every app (config `registries`). */
  globalRegistries: readonly string[];
  /** Stabilisation window after `up`. */
  stabilizeMs?: number;
  settleMs?: number;
}

export type Action = "deploy" | "pull" | "rollback" | "start" | "stop" | "restart" | "scale" | "remove";

interface RunCtx {
  app: AppRow;
  deployId: number;
  signal: AbortSignal;
  line: (action: DeployFrame["action"], text: string) => void;
}

const MAX_SCALE = 100;

/** Build the deployer. */
export function createDeployer(d: DeployerDeps) {
  const locks = new AppLocks();
  const controllers = new Map<string, AbortController>();
  const inflight = new Set<Promise<void>>();
  const log = d.log;
  const now = () => iso(d.clock.now());
  const policy = (slug: string) => ({
    appDir: d.files.dir(slug),
    appsDir: d.appsDir,
    dataDir: d.dataDir,
    allowedHostPaths: d.allowedHostPaths,
  });
  const runDir = (slug: string) => join(d.dataDir, "run", slug);
  const renderedPath = (slug: string) => join(runDir(slug), "docker-compose.yml");
  const emptyEnvPath = (slug: string) => join(runDir(slug), "empty.env");

  const docker = () => {
    const { engine, compose, problem } = d.docker;
    if (!engine || !compose) throw new DockerDown(problem ?? "docker is not available");
    return { engine, compose };
  };

  const appEntry = (
    app: AppRow | { id: number | null; slug: string },
    e: Omit<Parameters<Activity["record"]>[0], "appSlug" | "appId">,
  ) => d.activity.record({ ...e, appSlug: app.slug, appId: app.id ?? null });

  /** Ensure the app row exists (recording its creation) and is not marked removed. */
  const ensureApp = (slug: string, actor: Actor): AppRow => {
    const existing = d.repo.bySlug(slug);
    if (existing && !existing.removedAt) return existing;
    return d.db.tx(() => {
      const app = existing ? d.repo.update(existing.id, { removedAt: null }, now()) : d.repo.create(slug, now());
      appEntry(app, {
        actor,
        category: "lifecycle",
        action: "created",
        target: slug,
        summary: existing ? `app ${slug} is back (its directory returned)` : `${actor.name} created app ${slug}`,
      });
      return app;
    });
  };

  /** Take the lock, journal the operation, and run `job` in the background. Throws 409 when the app is busy. */
  const launch = (
    slug: string,
    action: Action,
    source: string,
    job: (rc: RunCtx) => Promise<void>,
    versionId: number | null = null,
    held: (() => void) | null = null,
  ) => {
    const release = held ?? locks.tryAcquire(slug);
    if (!release) throw conflict(`${slug} is busy: another deploy or action is in progress`);
    let deployId: number;
    let app: AppRow;
    try {
      app = d.repo.bySlug(slug)!;
      deployId = d.repo.insertDeploy({ appId: app.id, versionId, action, source, now: now() }).id;
    } catch (e) {
      release();
      throw e;
    }
    const ac = new AbortController();
    controllers.set(slug, ac);
    d.output.begin(slug);
    const rc: RunCtx = { app, deployId, signal: ac.signal, line: (a, text) => d.output.line(slug, a, text) };
    const finished: Promise<void> = (async () => {
      try {
        await job(rc);
      } catch (e) {
        const msg = e instanceof HttpError ? (e.reason ?? e.message) : (e as Error).message;
        log.error("operation failed", { app: slug, action, error: msg });
        d.repo.finishDeploy(deployId, "failed", msg, now());
        d.output.end(slug, "none", `failed: ${msg}`);
      } finally {
        controllers.delete(slug);
        release();
        if (d.output.active(slug)) d.output.end(slug, "none", "finished");
      }
    })();
    inflight.add(finished);
    void finished.finally(() => inflight.delete(finished));
    return { deployId, finished };
  };

  /** Make the rendered file and the empty env file compose runs with. */
  const writeRendered = (slug: string, rendered: string) => {
    mkdirSync(runDir(slug), { recursive: true, mode: 0o700 });
    writeFileAtomic(renderedPath(slug), rendered, 0o600);
    writeFileAtomic(emptyEnvPath(slug), "", 0o600);
  };

  const refFor = (slug: string, extraEnv: Record<string, string> = {}): ProjectRef => ({
    name: projectName(slug),
    file: renderedPath(slug),
    // a removed app directory can still be taken down: `down` resolves no paths, so the run dir stands in
    projectDir: existsSync(d.files.dir(slug)) ? d.files.dir(slug) : runDir(slug),
    envFile: emptyEnvPath(slug),
    env: extraEnv,
  });

  const pipe = (rc: RunCtx, action: DeployFrame["action"]) => ({
    onLine: (text: string) => rc.line(action, text),
    signal: rc.signal,
  });

  const failed = (r: RunResult, what: string) =>
    r.killed ? "cancelled" : `${what} failed (exit ${r.code})${r.output ? `: ${lastLine(r.output)}` : ""}`;

  /** Registry names that apply to an app: the global list plus its label (or none with `none`). */
  const registriesFor = (p: Prepared) => (p.labels.registries === null ? [...d.globalRegistries] : p.labels.registries);

  /** Pull what is missing (or everything), with a throwaway docker config holding the app's registry credentials. */
  const pullImages = async (rc: RunCtx, slug: string, p: Prepared, all: boolean): Promise<string | null> => {
    const { engine, compose } = docker();
    const wanted: string[] = [];
    for (const s of p.project.services) {
      if (!s.image) continue;
      const policyPull = (s.pullPolicy ?? "missing").toLowerCase();
      if (policyPull === "never" || policyPull === "build") continue;
      if (all || policyPull === "always" || !(await engine.imageExists(s.image))) wanted.push(s.name);
    }
    if (wanted.length === 0) return null;
    const names = registriesFor(p);
    const images = p.project.services.filter((s) => wanted.includes(s.name)).map((s) => s.image!);
    const cfg = d.registries.dockerConfig(names);
    rc.line("pull", `pulling ${wanted.join(", ")}${cfg ? ` (registries: ${names.join(", ")})` : ""}`);
    try {
      const r = await compose.pull(refFor(slug, cfg ? { DOCKER_CONFIG: cfg.dir } : {}), wanted, pipe(rc, "pull"));
      if (r.code === 0) return null;
      // a pull that failed is fine when the image is here anyway (a local-only image on an explicit pull)
      const missing: string[] = [];
      for (const img of images) if (!(await engine.imageExists(img))) missing.push(img);
      if (missing.length === 0 && !r.killed) {
        rc.line("pull", "pull failed; using the images present locally");
        return null;
      }
      const hosts = [...new Set(missing.map(imageRegistry))].join(", ");
      return r.killed ? "cancelled" : `${failed(r, "pull")}; missing: ${missing.join(", ")} (registry ${hosts})`;
    } finally {
      cfg?.cleanup();
    }
  };

  /**
   * Run a prepared version: render, pull, up, stabilise. `error` is null on success; `touched` says whether the
   * containers may have changed (nothing did when a pull failed or was cancelled).
   */
  const runVersion = async (
    rc: RunCtx,
    slug: string,
    p: Prepared,
    o: { pullAll: boolean },
  ): Promise<{ error: string | null; touched: boolean }> => {
    const { engine, compose } = docker();
    writeRendered(slug, p.rendered);
    if (p.routed.length) await engine.ensureNetwork(PUBLIC_NETWORK);
    const pullError = await pullImages(rc, slug, p, o.pullAll);
    if (pullError) return { error: pullError, touched: false };
    if (rc.signal.aborted) return { error: "cancelled", touched: false };
    const scale = scaleOf(d.repo.byId(rc.app.id)!);
    const up = await compose.up(refFor(slug), { ...pipe(rc, "up"), scale });
    if (up.code !== 0) return { error: failed(up, "compose up"), touched: true };
    rc.line("up", "waiting for the containers to be running and healthy");
    return { error: await stable(engine, rc, slug, p, scale), touched: true };
  };

  /** Wait until the app's containers are running (and healthy) and stay so: the error when they do not, else null. */
  const stable = async (
    engine: Engine,
    rc: RunCtx,
    slug: string,
    p: Prepared,
    scale: Record<string, number>,
  ): Promise<string | null> => {
    const s = await waitStable(engine, projectName(slug), expectation(p.project, scale), {
      windowMs: d.stabilizeMs ?? 60_000,
      settleMs: d.settleMs,
      signal: rc.signal,
    });
    return s.ok ? null : s.error;
  };

  /** Store the content as a version (identical content is the same version) and record what changed. */
  const recordVersion = (
    app: AppRow,
    compose: string,
    envText: string,
    hash: string,
    source: string,
    actor: Actor,
    parsed: ComposeProject | null,
  ) =>
    d.db.tx(() => {
      const existing = d.repo.versionByHash(app.id, hash);
      const current = app.currentVersionId ? d.repo.version(app.currentVersionId) : undefined;
      const version =
        existing ??
        d.repo.insertVersion({
          appId: app.id,
          hash,
          compose,
          envSealed: d.secrets.seal(envText),
          source,
          createdBy: actor.name,
          createdAt: now(),
        });
      if (!current || current.id !== version.id) {
        const before = current ? safeParse(current.compose, d.secrets.open(current.envSealed)) : null;
        if (parsed) {
          const endpoints = diffEndpoints(before ? safeLabels(before) : null, parseAppLabels(parsed));
          if (endpoints) {
            appEntry(app, {
              actor,
              category: "endpoint",
              action: "endpoints_changed",
              target: app.slug,
              summary: `${actor.name} changed endpoints of ${app.slug}: ${endpoints.summary}`,
              composeVersionId: version.id,
              before: endpoints.before,
              after: endpoints.after,
            });
          }
          const diff = diffCompose(before, parsed);
          appEntry(app, {
            actor,
            category: "compose",
            action: current ? "compose_changed" : "compose_created",
            target: app.slug,
            summary: `${actor.name} ${existing ? `restored version ${version.version} of` : current ? "changed" : "set"} ${app.slug}${diff.summary ? `: ${diff.summary}` : ""}`,
            composeVersionId: version.id,
            before: diff.before,
            after: diff.after,
          });
        }
      }
      return version;
    });

  const settleResult = (
    rc: RunCtx,
    slug: string,
    version: VersionRow,
    error: string | null,
    actor: Actor,
    kind: "deploy" | "rollback",
  ) =>
    d.db.tx(() => {
      const app = d.repo.byId(rc.app.id)!;
      if (error === null) {
        d.repo.setVersionStatus(version.id, "good");
        d.repo.update(app.id, { currentVersionId: version.id, lastDeployStatus: "succeeded", lastError: null }, now());
        d.repo.finishDeploy(rc.deployId, "succeeded", null, now());
        appEntry(app, {
          actor,
          category: "deploy",
          action: kind === "rollback" ? "rolled_back" : "deploy_succeeded",
          target: slug,
          summary:
            kind === "rollback"
              ? `${slug} rolled back to version ${version.version}`
              : `${slug} version ${version.version} deployed`,
          composeVersionId: version.id,
        });
      } else {
        const cancelled = error === "cancelled";
        d.repo.setVersionStatus(version.id, "failed");
        d.repo.update(app.id, { lastDeployStatus: cancelled ? "cancelled" : "failed", lastError: error }, now());
        d.repo.finishDeploy(rc.deployId, cancelled ? "cancelled" : "failed", error, now());
        appEntry(app, {
          actor,
          category: "deploy",
          action: kind === "rollback" ? "rollback_failed" : "deploy_failed",
          target: slug,
          summary: `${kind === "rollback" ? "rollback of" : "deploy of"} ${slug} version ${version.version} ${cancelled ? "was cancelled" : "failed"}`,
          error,
          composeVersionId: version.id,
        });
      }
    });

  /** The deploy job for whatever the app's files hold now. */
  const deployFiles =
    (opts: { actor: Actor; source: string; pullAll?: boolean; autoRollback?: boolean }) => async (rc: RunCtx) => {
      const slug = rc.app.slug;
      const files = d.files.read(slug);
      if (!files) throw new Error("the app has no docker-compose.yml");
      let prepared: Prepared | null = null;
      let prepError: string | null = null;
      try {
        prepared = prepare(files.compose, files.env, policy(slug));
      } catch (e) {
        prepError = e instanceof HttpError ? (e.reason ?? e.message) : (e as Error).message;
      }
      const version = recordVersion(
        rc.app,
        files.compose,
        files.env,
        files.hash,
        opts.source,
        opts.actor,
        prepared?.project ?? null,
      );
      d.repo.update(rc.app.id, { attemptedVersionId: version.id }, now());
      d.repo.setDeployVersion(rc.deployId, version.id);
      rc.line("up", `deploying ${slug} version ${version.version}`);
      const run = prepError
        ? { error: prepError, touched: false }
        : await runVersion(rc, slug, prepared!, { pullAll: !!opts.pullAll });
      const error = run.error;
      if (error) rc.line("up", `deploy failed: ${error}`);
      // an explicit rollback is recorded as one (rolled_back / rollback_failed), like the automatic kind
      settleResult(rc, slug, version, error, opts.actor, opts.source === "rollback" ? "rollback" : "deploy");
      // containers untouched (refused content, failed pull) still run the good version: nothing to roll back
      if (error && run.touched && opts.autoRollback !== false) await autoRollback(rc, slug, version, opts.actor);
      d.output.end(slug, "up", error ? `deploy failed: ${error}` : `deployed version ${version.version}`);
    };

  /** After a failed deploy: run the last good version again (the app's files stay as the user left them). */
  const autoRollback = async (rc: RunCtx, slug: string, failedVersion: VersionRow, actor: Actor) => {
    const app = d.repo.byId(rc.app.id)!;
    if (!app.currentVersionId || app.currentVersionId === failedVersion.id) return;
    const good = d.repo.version(app.currentVersionId)!;
    rc.line("up", `rolling back to version ${good.version}`);
    const rollbackId = d.repo.insertDeploy({
      appId: app.id,
      versionId: good.id,
      action: "rollback",
      source: "system",
      now: now(),
    }).id;
    const rrc = { ...rc, deployId: rollbackId, signal: new AbortController().signal };
    let error: string | null;
    try {
      const p = prepare(good.compose, d.secrets.open(good.envSealed), policy(slug));
      error = (await runVersion(rrc, slug, p, { pullAll: false })).error;
    } catch (e) {
      error = (e as Error).message;
    }
    settleResult(rrc, slug, good, error, actor, "rollback");
    // the app now runs the good version, but the failed content is what was last attempted
    d.repo.update(app.id, { lastDeployStatus: "failed", lastError: d.repo.deploy(rc.deployId)?.error ?? null }, now());
  };

  /** Re-render the version the app runs, for lifecycle actions (the rendered file may be gone with a wiped data dir). */
  const ensureRendered = (app: AppRow): Prepared | null => {
    const v = app.currentVersionId ? d.repo.version(app.currentVersionId) : null;
    const source = v ? { compose: v.compose, env: d.secrets.open(v.envSealed) } : d.files.read(app.slug);
    if (!source) return null;
    const p = prepare(source.compose, source.env, policy(app.slug));
    writeRendered(app.slug, p.rendered);
    return p;
  };

  const lifecycleEntry = (
    app: { id: number | null; slug: string },
    actor: Actor,
    action: string,
    summary: string,
    before?: unknown,
    after?: unknown,
  ) => appEntry(app, { actor, category: "lifecycle", action, target: app.slug, summary, before, after });

  const mustApp = (slug: string) => {
    const app = d.repo.bySlug(slug);
    if (!app || app.removedAt) throw notFound();
    return app;
  };

  return {
    locks,

    /** Whether an operation runs for the app. */
    busy: (slug: string) => locks.busy(slug),

    /** Check content without deploying it (400 with the service and rule when unsafe). */
    validate: (slug: string, compose: string, envText: string) => prepare(compose, envText, policy(slug)),

    /**
     * Deploy new content (API and CLI): validated first (nothing is written when it is refused), then written to the
     * apps directory and deployed in the background. 409 while the app is busy.
     */
    submit(slug: string, compose: string, envText: string, o: { actor: Actor; source: string; autoRollback?: boolean }) {
      prepare(compose, envText, policy(slug));
      if (locks.busy(slug)) throw conflict(`${slug} is busy: another deploy or action is in progress`);
      docker();
      ensureApp(slug, o.actor);
      d.files.write(slug, compose, envText);
      return launch(slug, "deploy", o.source, deployFiles(o));
    },

    /** Deploy what the files hold (reconciler, env change); waits for the lock (or uses one the caller holds). */
    async deployFromFiles(slug: string, o: { actor: Actor; source: string; autoRollback?: boolean }, held?: () => void) {
      const release = held ?? (await locks.acquire(slug));
      try {
        ensureApp(slug, o.actor);
      } catch (e) {
        release();
        throw e;
      }
      return launch(slug, "deploy", o.source, deployFiles(o), null, release);
    },

    /** Write that version's content back as the desired state and deploy it. */
    rollback(slug: string, versionId: number, actor: Actor) {
      const app = mustApp(slug);
      const v = d.repo.version(versionId);
      if (!v || v.appId !== app.id) throw notFound();
      const envText = d.secrets.open(v.envSealed);
      prepare(v.compose, envText, policy(slug));
      if (locks.busy(slug)) throw conflict(`${slug} is busy: another deploy or action is in progress`);
      docker();
      d.files.write(slug, v.compose, envText);
      return launch(slug, "rollback", "rollback", deployFiles({ actor, source: "rollback" }), v.id);
    },

    pull(slug: string, actor: Actor) {
      mustApp(slug);
      docker();
      return launch(slug, "pull", actor.source, deployFiles({ actor, source: actor.source, pullAll: true }));
    },

    stop(slug: string, actor: Actor) {
      const app = mustApp(slug);
      const { compose } = docker();
      return launch(slug, "stop", actor.source, async (rc) => {
        d.db.tx(() => {
          d.repo.update(app.id, { stopped: true }, now());
          lifecycleEntry(app, actor, "stopped", `${actor.name} stopped ${slug}`);
        });
        if (!ensureRendered(app)) throw new Error("the app has no compose file");
        const r = await compose.stop(refFor(slug), undefined, pipe(rc, "down"));
        finish(rc, slug, "down", r.code === 0 ? null : failed(r, "compose stop"));
      });
    },

    start(slug: string, actor: Actor) {
      const app = mustApp(slug);
      const { engine, compose } = docker();
      return launch(slug, "start", actor.source, async (rc) => {
        d.db.tx(() => {
          d.repo.update(app.id, { stopped: false }, now());
          lifecycleEntry(app, actor, "started", `${actor.name} started ${slug}`);
        });
        const p = ensureRendered(app);
        if (!p) throw new Error("the app has no compose file");
        const scale = scaleOf(app);
        const r = await compose.up(refFor(slug), { ...pipe(rc, "up"), scale });
        const error = r.code === 0 ? await stable(engine, rc, slug, p, scale) : failed(r, "compose up");
        finish(rc, slug, "up", error);
      });
    },

    restart(slug: string, actor: Actor) {
      const app = mustApp(slug);
      const { engine, compose } = docker();
      return launch(slug, "restart", actor.source, async (rc) => {
        lifecycleEntry(app, actor, "restarted", `${actor.name} restarted ${slug}`);
        const p = ensureRendered(app);
        if (!p) throw new Error("the app has no compose file");
        const r = await compose.restart(refFor(slug), undefined, pipe(rc, "restart"));
        let error = r.code === 0 ? null : failed(r, "compose restart");
        // as after start: "restarted" means running again, not only that docker accepted the restart
        if (!error && !app.stopped) error = await stable(engine, rc, slug, p, scaleOf(app));
        finish(rc, slug, "restart", error);
      });
    },

    /** Change replicas; refused with a reason for services that cannot scale. Persisted as desired state. */
    scale(slug: string, wanted: Record<string, unknown>, actor: Actor) {
      const app = mustApp(slug);
      const p = ensureRendered(app);
      if (!p) throw notFound();
      const before = scaleOf(app);
      const after = { ...before };
      const entries = Object.entries(wanted);
      if (entries.length === 0) throw badRequest("services must name at least one service");
      for (const [name, n] of entries) {
        const svc = p.project.services.find((s) => s.name === name);
        if (!svc) throw badRequest(`service "${name}" does not exist`);
        if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > MAX_SCALE)
          throw badRequest(`service "${name}": replicas must be a whole number from 0 to ${MAX_SCALE}`);
        const can = scalability(svc);
        if (n > 1 && !can.ok) throw badRequest(`service "${name}" cannot scale: ${can.reason}`);
        after[name] = n;
      }
      const { engine, compose } = docker();
      if (locks.busy(slug)) throw conflict(`${slug} is busy: another deploy or action is in progress`);
      d.db.tx(() => {
        d.repo.update(app.id, { scaleJson: JSON.stringify(after) }, now());
        lifecycleEntry(
          app,
          actor,
          "scaled",
          `${actor.name} scaled ${slug}: ${entries.map(([k, v]) => `${k}=${v}`).join(", ")}`,
          { replicas: before },
          { replicas: after },
        );
      });
      return launch(slug, "scale", actor.source, async (rc) => {
        const r = await compose.up(refFor(slug), { ...pipe(rc, "scale"), scale: after });
        const error = r.code === 0 ? await stable(engine, rc, slug, p, after) : failed(r, "compose up --scale");
        finish(rc, slug, "scale", error);
      });
    },

    /** Remove the app: containers (and volumes when asked), its directory and its row; its activity stays. */
    remove(slug: string, o: { volumes: boolean }, actor: Actor) {
      const app = mustApp(slug);
      const { compose } = docker();
      return launch(slug, "remove", actor.source, async (rc) => {
        const p = ensureRendered(app);
        const r = p ? await compose.down(refFor(slug), { ...pipe(rc, "down"), volumes: o.volumes }) : null;
        if (r && r.code !== 0) return finish(rc, slug, "down", failed(r, "compose down"));
        d.files.remove(slug);
        d.db.tx(() => {
          lifecycleEntry(
            { id: null, slug },
            actor,
            "removed",
            `${actor.name} removed ${slug}${o.volumes ? " and its volumes" : ""}`,
          );
          d.repo.finishDeploy(rc.deployId, "succeeded", null, now());
          d.repo.delete(app.id);
        });
        d.output.end(slug, "down", "removed");
      });
    },

    /** The app's directory went away: take its containers down (volumes kept) and mark it removed. */
    teardown(slug: string, actor: Actor, held?: () => void) {
      const app = d.repo.bySlug(slug);
      if (!app || app.removedAt) {
        held?.();
        return null;
      }
      return launch(
        slug,
        "remove",
        "system",
        async (rc) => {
          if (d.docker.compose) {
            const p = ensureRenderedQuiet(app);
            if (p) {
              const r = await d.docker.compose.down(refFor(slug), pipe(rc, "down"));
              if (r.code !== 0) return finish(rc, slug, "down", failed(r, "compose down"));
            }
          }
          d.db.tx(() => {
            d.repo.update(app.id, { removedAt: now() }, now());
            lifecycleEntry(app, actor, "removed", `${slug} removed (its directory is gone; volumes kept)`);
            d.repo.finishDeploy(rc.deployId, "succeeded", null, now());
          });
          d.output.end(slug, "down", "removed");
        },
        null,
        held ?? null,
      );
    },

    /** Cancel the running operation of an app. */
    cancel(slug: string, actor: Actor): boolean {
      mustApp(slug);
      const ac = controllers.get(slug);
      if (!ac) return false;
      log.info("cancel requested", { app: slug, by: actor.name });
      ac.abort();
      return true;
    },

    /** Mark deploys a crash left running as interrupted; returns their apps (to deploy again). */
    recoverInterrupted(): string[] {
      const slugs = new Set<string>();
      for (const dep of d.repo.running()) {
        d.repo.finishDeploy(dep.id, "interrupted", "interrupted: sundeck stopped during the operation", now());
        const app = d.repo.byId(dep.appId);
        if (app) slugs.add(app.slug);
      }
      return [...slugs];
    },

    /**
     * Shutdown: let running operations finish for `graceMs`, then cancel the rest and wait for them to record how
     * they ended (an operation cut short is run again at the next start).
     */
    async drain(graceMs: number): Promise<void> {
      if (inflight.size === 0) return;
      const all = Promise.allSettled([...inflight]);
      const timedOut = await Promise.race([
        all.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), graceMs)),
      ]);
      if (!timedOut) return;
      log.warn("shutdown: cancelling operations still running", { apps: [...controllers.keys()].join(",") });
      for (const ac of controllers.values()) ac.abort();
      await Promise.race([all, new Promise((r) => setTimeout(r, 15_000))]);
    },

    /** The desired replicas of an app. */
    scaleOf: (slug: string) => scaleOf(mustApp(slug)),
  };

  function ensureRenderedQuiet(app: AppRow): Prepared | null {
    try {
      return ensureRendered(app);
    } catch {
      return null;
    }
  }

  function finish(rc: RunCtx, slug: string, action: DeployFrame["action"], error: string | null) {
    d.repo.finishDeploy(rc.deployId, error === null ? "succeeded" : error === "cancelled" ? "cancelled" : "failed", error, now());
    if (error) {
      d.repo.update(rc.app.id, { lastError: error }, now());
      log.warn("action failed", { app: slug, action, error });
    }
    d.output.end(slug, action, error ? `failed: ${error}` : "done");
  }
}

/** Raised when Docker is missing; routes answer 503. */
export class DockerDown extends HttpError {
  constructor(readonly problem: string) {
    super(503, problem);
  }
}

function scaleOf(app: AppRow): Record<string, number> {
  try {
    return JSON.parse(app.scaleJson) as Record<string, number>;
  } catch {
    return {};
  }
}

function safeParse(compose: string, envText: string): ComposeProject | null {
  try {
    return parseCompose(compose, parseEnvFile(envText));
  } catch {
    return null;
  }
}

function safeLabels(p: ComposeProject): AppLabels | null {
  try {
    return parseAppLabels(p);
  } catch {
    return null;
  }
}

function lastLine(output: string): string {
  const lines = output.trim().split("\n").filter(Boolean);
  return (lines[lines.length - 1] ?? "").slice(0, 300);
}

export type Deployer = ReturnType<typeof createDeployer>;
