/**
 * Rolling replacement of a routed service through our own proxy: the new containers start beside the old ones
 * (compose scales the service up without recreating what runs), each is probed (the HTTP health label, else its
 * compose healthcheck, else its port accepting connections), then the proxy's upstream set for the service swaps
 * to them in one step, the old ones drain (exchanges and tunnels in progress get up to drain_timeout), and they are
 * stopped and removed by id. A new replica that does not get ready is removed and the old ones keep serving.
 * Each rollout is journaled (table rollouts): a crash before the switch converges on the old set, after it on the new.
 */
import { and, eq } from "drizzle-orm";
import type { ServiceInfo } from "../../compose/model";
import { REV_LABEL } from "../../compose/rewrite";
import { rolloutSettings } from "../../compose/rollout-labels";
import type { Db } from "../../db";
import { rollouts } from "../../db/schema";
import { PUBLIC_NETWORK, projectName } from "../../docker/naming";
import { hostPort } from "../../docker/replicas";
import type { ComposeDriver, ContainerSummary, Engine, ProjectRef } from "../../docker/types";
import type { Log } from "../../log/logger";
import type { TrafficPins } from "../../proxy/pins";
import type { RunCtx } from "./operations";
import { probe, short, sleep } from "./probe";

/** The proxy's side of a rollout: replicas still busy, idle connections to drop, the route table caught up. */
export interface RolloutTraffic {
  busy(addrs: ReadonlySet<string>): number;
  dropIdle(addrs: ReadonlySet<string>): void;
  /** WebSocket tunnels to these replicas get a Close frame (1001) and end; how many there were. */
  closeTunnels(addrs: ReadonlySet<string>): number;
  settled(): Promise<void>;
}

export interface RolloutDeps {
  db: Db;
  log: Log;
  now: () => string;
  pins: TrafficPins;
  /** The proxy, once it runs (null before: nothing routes yet, nothing drains). */
  traffic: () => RolloutTraffic | null;
  /** Re-read an app's containers into the status board the route table reads. */
  refreshBoard: (slug: string) => Promise<void>;
}

/** The distinct ports a service's endpoints reach, the first endpoint's first (the HTTP probe's); [] without any. */
export function servicePorts(endpoints: readonly { service: string; port: number }[], service: string): number[] {
  return [...new Set(endpoints.filter((e) => e.service === service).map((e) => e.port))];
}

/** One service to roll: its definition, its rollout labels, how many replicas, and the ports its endpoints reach. */
export interface RollTarget {
  service: ServiceInfo;
  replicas: number;
  ports: number[];
  /** The rev the rendered file gives the service. */
  rev: string;
}

const ids = (cs: readonly ContainerSummary[]) => cs.map((c) => c.id);

/** How long tunnels told to close get for the Close handshake (the proxy's own grace is a second per step). */
const TUNNEL_CLOSE_MS = 2500;

/** Build the rollout runner. */
export function createRollouts(d: RolloutDeps) {
  const journal = {
    begin(slug: string, service: string, old: string[]) {
      const now = d.now();
      d.db.orm
        .insert(rollouts)
        .values({ slug, service, oldIds: JSON.stringify(old), phase: "starting", createdAt: now, updatedAt: now })
        .onConflictDoUpdate({
          target: [rollouts.slug, rollouts.service],
          set: { oldIds: JSON.stringify(old), newIds: "[]", phase: "starting", updatedAt: now },
        })
        .run();
    },
    update(slug: string, service: string, set: { newIds?: string[]; phase?: "switched" }) {
      const row = journal.row(slug, service);
      if (!row) return;
      d.db.orm
        .update(rollouts)
        .set({
          ...(set.newIds ? { newIds: JSON.stringify(set.newIds) } : {}),
          ...(set.phase ? { phase: set.phase } : {}),
          updatedAt: d.now(),
        })
        .where(eq(rollouts.id, row.id))
        .run();
    },
    row(slug: string, service: string) {
      return d.db.orm
        .select()
        .from(rollouts)
        .where(and(eq(rollouts.slug, slug), eq(rollouts.service, service)))
        .get();
    },
    end(slug: string, service: string) {
      const row = journal.row(slug, service);
      if (row) d.db.orm.delete(rollouts).where(eq(rollouts.id, row.id)).run();
    },
  };

  /** Stop (the container's own grace period) and remove containers by id; errors are logged, not thrown. */
  const remove = async (engine: Engine, list: readonly string[]) => {
    await Promise.all(
      list.map(async (id) => {
        try {
          await engine.stop(id);
        } catch {
          // gone already, or it will be forced below
        }
        try {
          await engine.removeContainer(id, { force: true, volumes: true });
        } catch (e) {
          d.log.warn("removing a replaced container failed", { container: short(id), error: (e as Error).message });
        }
      }),
    );
  };

  /** The `ip:port` of containers on the proxy network, for each of the ports. */
  const addresses = async (engine: Engine, list: readonly string[], ports: readonly number[]): Promise<Set<string>> => {
    const out = new Set<string>();
    for (const id of list) {
      try {
        const ip = (await engine.inspect(id))?.NetworkSettings?.Networks?.[PUBLIC_NETWORK]?.IPAddress;
        if (ip) for (const port of ports) out.add(hostPort(ip, port));
      } catch {
        // gone: nothing to drain
      }
    }
    return out;
  };

  /**
   * Wait until no exchange or tunnel is open to these replicas (at most `ms`); then WebSocket tunnels still open get
   * a clean close (a Close frame 1001 between two frames, the client's answer awaited up to a second), and what is
   * still open after that is said and cut with the containers.
   */
  const drain = async (addrs: ReadonlySet<string>, ms: number, signal: AbortSignal, line: (text: string) => void) => {
    const traffic = d.traffic();
    if (!traffic) return;
    traffic.dropIdle(addrs);
    const until = async (deadline: number, floor: number) => {
      while (traffic.busy(addrs) > floor && Date.now() < deadline && !signal.aborted) await sleep(50);
      return traffic.busy(addrs);
    };
    const open = await until(Date.now() + ms, 0);
    if (open === 0) return;
    const tunnels = traffic.closeTunnels(addrs);
    const left = tunnels > 0 ? await until(Date.now() + TUNNEL_CLOSE_MS, open - tunnels) : open;
    const said = tunnels > 0 ? `; ${tunnels} WebSocket tunnels closed (1001 going away)` : "";
    line(`${open} connections still open after drain_timeout${said}${left > 0 ? `; ${left} cut` : ""}`);
  };

  return {
    journal,

    /**
     * Restart a routed service's replicas one at a time: each is taken out of the route table, drained, restarted
     * and probed before the next; the error, or null.
     */
    async restartEach(
      rc: RunCtx,
      engine: Engine,
      service: ServiceInfo,
      ports: readonly number[],
      replicas: readonly ContainerSummary[],
      windowMs: number,
    ): Promise<string | null> {
      const slug = rc.app.slug;
      const name = service.name;
      const settings = rolloutSettings(service);
      const line = (text: string) => rc.line("restart", `${name}: ${text}`);
      try {
        for (const c of replicas) {
          const addrs = await addresses(engine, [c.id], ports);
          d.pins.drain(addrs);
          d.pins.set(
            slug,
            name,
            replicas.filter((x) => x.id !== c.id).map((x) => x.id),
          );
          await d.traffic()?.settled();
          try {
            await drain(addrs, settings.drainMs, rc.signal, line);
            await engine.stop(c.id);
          } finally {
            d.pins.drain(addrs, false);
          }
          await engine.start(c.id);
          const error = await probe(engine, c.id, ports, settings, windowMs, rc.signal);
          if (error) return error;
          await d.refreshBoard(slug);
          line(`restarted ${short(c.id)}`);
        }
        return null;
      } finally {
        d.pins.clear(slug, name);
        await d.refreshBoard(slug);
      }
    },

    /**
     * Scale a routed service down without letting compose pick: the highest-numbered replicas leave the route table,
     * drain, and are removed by id, so compose then finds the count it is asked for. Returns the undo of the pin,
     * to call once compose is done.
     */
    async drainLeaving(
      rc: RunCtx,
      engine: Engine,
      service: ServiceInfo,
      ports: readonly number[],
      replicas: readonly ContainerSummary[],
      keep: number,
    ): Promise<() => Promise<void>> {
      const slug = rc.app.slug;
      const name = service.name;
      const ordered = [...replicas].sort((a, b) => (a.number ?? 0) - (b.number ?? 0));
      const leaving = ordered.slice(keep).map((c) => c.id);
      if (leaving.length === 0) return async () => {};
      const addrs = await addresses(engine, leaving, ports);
      d.pins.drain(addrs);
      d.pins.set(
        slug,
        name,
        ordered.slice(0, keep).map((c) => c.id),
      );
      await d.traffic()?.settled();
      try {
        await drain(addrs, rolloutSettings(service).drainMs, rc.signal, (text) => rc.line("scale", `${name}: ${text}`));
        await remove(engine, leaving);
      } finally {
        d.pins.drain(addrs, false);
      }
      return async () => {
        await d.refreshBoard(slug);
        d.pins.clear(slug, name);
      };
    },

    /** Whether a crash left rollouts to converge. */
    pending: (): boolean => d.db.orm.select().from(rollouts).limit(1).all().length > 0,

    /**
     * What the service's containers say about replacing it, from one inspection each: `unsafe`, why it must be left to
     * compose's recreate even though it is routed (an anonymous volume, which compose carries over only when it
     * recreates), or null; `unchanged`, whether it runs as the rendered file defines it (same rev, same image).
     */
    async assess(
      engine: Engine,
      old: readonly ContainerSummary[],
      rev: string,
      image: string | null,
    ): Promise<{ unsafe: string | null; unchanged: boolean }> {
      const infos = await Promise.all(old.map((c) => engine.inspect(c.id).catch(() => null)));
      for (const info of infos) {
        const mounts: Array<{ Type?: string; Name?: string; Destination?: string }> = info?.Mounts ?? [];
        const anon = mounts.find((m) => m.Type === "volume" && /^[0-9a-f]{64}$/.test(m.Name ?? ""));
        if (anon)
          return {
            unsafe: `an anonymous volume at ${anon.Destination}: compose carries it over only when it recreates`,
            unchanged: false,
          };
      }
      if (old.length === 0 || old.some((c) => c.labels[REV_LABEL] !== rev)) return { unsafe: null, unchanged: false };
      const current = image && engine.imageId ? await engine.imageId(image) : null;
      return { unsafe: null, unchanged: !current || infos.every((i) => i?.Image === current) };
    },

    /**
     * Roll one service whose old containers are `old`: the error (the probe's last answer, or cancelled), or null once
     * the new replicas serve and the old ones are gone. With `later`, the drain and removal of the old replicas go on
     * after the switch (their promise pushed there), so the next service can roll while this one drains.
     */
    async roll(
      rc: RunCtx,
      engine: Engine,
      compose: ComposeDriver,
      ref: ProjectRef,
      t: RollTarget,
      old: readonly ContainerSummary[],
      windowMs: number,
      later?: Promise<void>[],
    ): Promise<string | null> {
      const slug = rc.app.slug;
      const name = t.service.name;
      const settings = rolloutSettings(t.service);
      const oldIds = ids(old);
      const line = (text: string) => rc.line("up", `${name}: ${text}`);
      journal.begin(slug, name, oldIds);
      // the old set keeps the traffic while the new one starts
      d.pins.set(slug, name, oldIds);
      let newIds: string[] = [];
      let draining: ReadonlySet<string> = new Set();
      const fail = async (error: string) => {
        line(`${error}; removing the new replicas, the old ones keep serving`);
        await remove(engine, newIds);
        d.pins.clear(slug, name);
        journal.end(slug, name);
        await d.refreshBoard(slug);
        return error;
      };
      try {
        line(`starting ${t.replicas} new ${t.replicas === 1 ? "replica" : "replicas"} beside ${oldIds.length}`);
        const up = await compose.up(ref, {
          onLine: (text) => rc.line("up", text),
          signal: rc.signal,
          services: [name],
          noDeps: true,
          noRecreate: true,
          scale: { [name]: oldIds.length + t.replicas },
        });
        const now = await engine.containers({ project: projectName(slug) });
        newIds = ids(now.filter((c) => c.service === name && !oldIds.includes(c.id)));
        journal.update(slug, name, { newIds });
        if (rc.signal.aborted) return await fail("cancelled");
        if (up.code !== 0) return await fail(`compose up failed (exit ${up.code})`);
        if (newIds.length !== t.replicas)
          return await fail(`expected ${t.replicas} new replicas, compose started ${newIds.length}`);

        const probed = await Promise.all(newIds.map((id) => probe(engine, id, t.ports, settings, windowMs, rc.signal)));
        const bad = probed.find((p) => p !== null);
        if (rc.signal.aborted) return await fail("cancelled");
        if (bad) return await fail(bad);

        // the switch: one route table rebuild moves every new request to the new set; the old replicas finish
        // what they were given (the proxy does not retry it elsewhere)
        await d.refreshBoard(slug);
        const oldAddrs = await addresses(engine, oldIds, t.ports);
        d.pins.drain(oldAddrs);
        draining = oldAddrs;
        d.pins.set(slug, name, newIds);
        await d.traffic()?.settled();
        journal.update(slug, name, { phase: "switched" });
        line(`switched traffic to ${newIds.map(short).join(", ")}`);

        // drain: what is in progress on the old replicas finishes (up to drain_timeout), then they go
        const retire = async () => {
          try {
            await drain(oldAddrs, settings.drainMs, rc.signal, line);
            await remove(engine, oldIds);
            await d.refreshBoard(slug);
            d.pins.clear(slug, name);
            journal.end(slug, name);
            line(`replaced ${oldIds.length} old ${oldIds.length === 1 ? "replica" : "replicas"}`);
          } finally {
            d.pins.drain(oldAddrs, false);
          }
        };
        draining = new Set();
        if (later) later.push(retire().catch((e) => line(`removing the old replicas failed: ${(e as Error).message}`)));
        else await retire();
        return null;
      } catch (e) {
        return await fail((e as Error).message);
      } finally {
        d.pins.drain(draining, false);
      }
    },

    /**
     * After a restart: every rollout a crash left converges, before the switch on the old containers (the new ones,
     * and any other the service has, are removed), after it on the new ones.
     */
    async converge(engine: Engine): Promise<void> {
      for (const row of d.db.orm.select().from(rollouts).all()) {
        const keep = new Set<string>(JSON.parse(row.phase === "switched" ? row.newIds : row.oldIds));
        const all = await engine.containers({ project: projectName(row.slug) });
        const drop = all.filter((c) => c.service === row.service && !keep.has(c.id)).map((c) => c.id);
        d.log.warn("a rolling deploy was cut short: converging", {
          app: row.slug,
          service: row.service,
          kept: keep.size,
          removed: drop.length,
          phase: row.phase,
        });
        await remove(engine, drop);
        d.db.orm.delete(rollouts).where(eq(rollouts.id, row.id)).run();
      }
    },
  };
}

export type Rollouts = ReturnType<typeof createRollouts>;
