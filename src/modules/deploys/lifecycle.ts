/**
 * Lifecycle actions on an app that runs a version: stop, start, restart, scale, remove, and the teardown of an app
 * whose directory went away. Each is an operation (queued behind a running one) with its activity entry.
 */
import type { ServiceInfo } from "../../compose/model";
import type { Prepared } from "../../compose/prepare";
import { chooseStrategy } from "../../compose/rollout-labels";
import { scalability } from "../../compose/scaling";
import type { Db } from "../../db";
import { projectName } from "../../docker/naming";
import type { ComposeDriver, ContainerSummary, Engine } from "../../docker/types";
import { badRequest, notFound } from "../../lib/errors";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import type { AppFilesStore } from "../apps/files";
import { requireApp } from "../apps/lookup";
import { type AppRepo, type AppRow, appScale } from "../apps/repo";
import { type ComposeRun, failed } from "./compose-run";
import { appEntry } from "./journal";
import type { Job, Operations, RunCtx } from "./operations";
import type { DeployOutput } from "./output";
import type { DeployRepo } from "./repo";
import { type Rollouts, servicePorts } from "./rollout";

const MAX_SCALE = 100;

export interface LifecycleDeps {
  db: Db;
  apps: AppRepo;
  repo: DeployRepo;
  files: AppFilesStore;
  activity: Activity;
  output: DeployOutput;
  ops: Operations;
  run: ComposeRun;
  now: () => string;
  /** Rolling replacement: a restart one replica at a time, a scale-down that drains first. */
  rollouts?: Rollouts;
  stabilizeMs?: number;
}

/** Build the lifecycle actions. */
export function createLifecycle(d: LifecycleDeps) {
  const { ops, run } = d;
  const entry = (
    app: { id: number | null; slug: string },
    actor: Actor,
    action: string,
    summary: string,
    before?: unknown,
    after?: unknown,
  ) => appEntry(d.activity, app, { actor, category: "lifecycle", action, target: app.slug, summary, before, after });

  /** The current version rendered again, or an error when the app has none. */
  const rendered = (app: AppRow) => {
    const p = run.ensureRendered(app);
    if (!p) throw new Error("the app has no compose file");
    return p;
  };

  /**
   * Restart the app: a routed service with two or more replicas one replica at a time (each drained, restarted and
   * probed: the others carry the traffic), the rest with compose's restart. The error, or null.
   */
  const restartApp = async (rc: RunCtx, engine: Engine, compose: ComposeDriver, p: Prepared | null): Promise<string | null> => {
    const slug = rc.app.slug;
    const each: Array<{ svc: ServiceInfo; ports: number[]; replicas: ContainerSummary[] }> = [];
    if (d.rollouts && p) {
      const cs = await engine.containers({ project: projectName(slug) });
      for (const svc of p.project.services) {
        const ports = servicePorts(p.labels.endpoints, svc.name);
        const replicas = cs.filter((c) => c.service === svc.name && c.state === "running");
        if (ports.length > 0 && replicas.length >= 2 && chooseStrategy(svc, true).strategy === "rolling")
          each.push({ svc, ports, replicas });
      }
    }
    const rest = p ? p.project.services.map((x) => x.name).filter((n) => !each.some((e) => e.svc.name === n)) : [];
    if (!p || rest.length) {
      const r = await compose.restart(run.refFor(slug), p ? rest : undefined, run.pipe(rc, "restart"));
      if (r.code !== 0) return failed(r, "compose restart");
    }
    for (const e of each) {
      rc.line("restart", `${e.svc.name}: one replica at a time (${e.replicas.length} replicas behind its endpoints)`);
      const window = run.windowFor(rc, p!, [e.svc.name]);
      const error = await d.rollouts!.restartEach(rc, engine, e.svc, e.ports, e.replicas, window);
      if (error) return error;
    }
    return null;
  };

  return {
    stop(slug: string, actor: Actor) {
      const app = requireApp(d.apps, slug);
      const { compose } = run.docker();
      return ops.launch(slug, "stop", actor.source, async (rc) => {
        d.db.tx(() => {
          d.apps.update(app.id, { stopped: true }, d.now());
          entry(app, actor, "stopped", `${actor.name} stopped ${slug}`);
        });
        rendered(rc.app);
        const r = await compose.stop(run.refFor(slug), undefined, run.pipe(rc, "down"));
        ops.finish(rc, "down", r.code === 0 ? null : failed(r, "compose stop"));
      });
    },

    start(slug: string, actor: Actor) {
      const app = requireApp(d.apps, slug);
      const { engine, compose } = run.docker();
      return ops.launch(slug, "start", actor.source, async (rc) => {
        d.db.tx(() => {
          d.apps.update(app.id, { stopped: false }, d.now());
          entry(app, actor, "started", `${actor.name} started ${slug}`);
        });
        const p = rendered(rc.app);
        const scale = appScale(rc.app);
        const r = await compose.up(run.refFor(slug), { ...run.pipe(rc, "up"), scale });
        ops.finish(rc, "up", r.code === 0 ? await run.stable(engine, rc, p, scale) : failed(r, "compose up"));
      });
    },

    restart(slug: string, actor: Actor) {
      const app = requireApp(d.apps, slug);
      const { engine, compose } = run.docker();
      return ops.launch(slug, "restart", actor.source, async (rc) => {
        entry(app, actor, "restarted", `${actor.name} restarted ${slug}`);
        const p = rendered(rc.app);
        let error = await restartApp(rc, engine, compose, p);
        // as after start: "restarted" means running again, not only that docker accepted the restart
        if (!error && !rc.app.stopped) error = await run.stable(engine, rc, p, appScale(rc.app));
        ops.finish(rc, "restart", error);
      });
    },

    /** Change replicas; refused with a reason for services that cannot scale. Persisted as desired state. */
    scale(slug: string, wanted: Record<string, unknown>, actor: Actor) {
      const app = requireApp(d.apps, slug);
      // checked without rendering: an operation running now may be using the rendered file
      const p = run.current(app);
      if (!p) throw notFound();
      const entries = Object.entries(wanted);
      if (entries.length === 0) throw badRequest("services must name at least one service");
      for (const [name, n] of entries) {
        const svc = p.project.services.find((s) => s.name === name);
        if (!svc) throw badRequest(`service "${name}" does not exist`);
        if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > MAX_SCALE)
          throw badRequest(`service "${name}": replicas must be a whole number from 0 to ${MAX_SCALE}`);
        const can = scalability(svc);
        if (n > 1 && !can.ok) throw badRequest(`service "${name}" cannot scale: ${can.reason}`);
      }
      const { engine, compose } = run.docker();
      return ops.launch(slug, "scale", actor.source, async (rc) => {
        // applied when the operation runs, on the replicas as they are then
        const before = appScale(rc.app);
        const after = { ...before, ...(Object.fromEntries(entries) as Record<string, number>) };
        // the entry names each scaled service's count before and after (compose's own, else 1, when never scaled)
        const names = entries.map(([k]) => k);
        const was = (k: string) => before[k] ?? p.project.services.find((s) => s.name === k)?.replicas ?? 1;
        const now = (k: string) => after[k];
        d.db.tx(() => {
          d.apps.update(app.id, { scaleJson: JSON.stringify(after) }, d.now());
          const what = names.map((k) => `${k} replicas ${was(k)} → ${now(k)}`).join(", ");
          const counts = (of: (k: string) => number) => ({ replicas: Object.fromEntries(names.map((k) => [k, of(k)])) });
          const summary = `${actor.name} scaled ${slug}: ${what}`;
          entry(app, actor, "scaled", summary, counts(was), counts(now));
        });
        const current = rendered(rc.app);
        // a routed service scaled down loses its highest-numbered replicas only after they drained
        const undo: Array<() => Promise<void>> = [];
        if (d.rollouts && current) {
          const cs = await engine.containers({ project: projectName(slug) });
          for (const name of names) {
            const svc = current.project.services.find((x) => x.name === name)!;
            const mine = cs.filter((c) => c.service === name && c.state === "running");
            const ports = servicePorts(current.labels.endpoints, name);
            if (ports.length === 0 || mine.length <= after[name] || chooseStrategy(svc, true).strategy !== "rolling") continue;
            undo.push(await d.rollouts.drainLeaving(rc, engine, svc, ports, mine, after[name]));
          }
        }
        const r = await compose.up(run.refFor(slug), { ...run.pipe(rc, "scale"), scale: after });
        for (const u of undo) await u();
        ops.finish(rc, "scale", r.code === 0 ? await run.stable(engine, rc, current, after) : failed(r, "compose up --scale"));
      });
    },

    /**
     * Remove the app: containers (and volumes when asked), its directory and its row; its activity stays. Never
     * checks the compose file again: an app whose file is refused or broken can always be removed.
     */
    remove(slug: string, o: { volumes: boolean }, actor: Actor) {
      const app = requireApp(d.apps, slug);
      // Docker missing: a 503 now, before anything is journaled
      run.docker();
      return ops.launch(slug, "remove", actor.source, async (rc) => {
        const error = await run.takeDown(rc, o);
        if (error) return ops.finish(rc, "down", error);
        d.files.remove(slug);
        d.db.tx(() => {
          entry({ id: null, slug }, actor, "removed", `${actor.name} removed ${slug}${o.volumes ? " and its volumes" : ""}`);
          d.repo.finishDeploy(rc.deployId, "succeeded", null, d.now());
          d.apps.delete(app.id);
        });
        d.output.end(slug, "down", "removed");
      });
    },

    /** The app's directory went away: take its containers down (volumes kept) and mark it removed. */
    teardown(slug: string, actor: Actor, held?: () => void) {
      const app = d.apps.bySlug(slug);
      if (!app || app.removedAt) {
        held?.();
        return null;
      }
      const job: Job = async (rc) => {
        // without docker the app is marked removed anyway; the next start finds no directory to deploy
        if (run.available()) {
          const error = await run.takeDown(rc, { volumes: false });
          if (error) return ops.finish(rc, "down", error);
        }
        d.db.tx(() => {
          d.apps.update(app.id, { removedAt: d.now() }, d.now());
          entry(app, actor, "removed", `${slug} removed (its directory is gone; volumes kept)`);
          d.repo.finishDeploy(rc.deployId, "succeeded", null, d.now());
        });
        d.output.end(slug, "down", "removed");
      };
      return ops.launch(slug, "remove", "system", job, { held: held ?? null });
    },
  };
}

export type Lifecycle = ReturnType<typeof createLifecycle>;
