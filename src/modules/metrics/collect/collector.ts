/**
 * One collection tick: the host sample, and one sample per container of a Sundeck app (replicas apart), read from
 * the container's cgroup files and /proc/<pid>/net/dev where this process can read them, from one-shot Engine API
 * stats otherwise. Never the `docker stats` CLI. The caller (the metrics service) decides how often to tick.
 */
import { join } from "node:path";
import type { Engine } from "../../../docker/types";
import type { Log } from "../../../log/logger";
import type { ContainerSample, Tick } from "../samples";
import { type Counters, findCgroup, readCgroup } from "./cgroup";
import { engineStats } from "./engine-stats";
import { HostReader } from "./host";
import { Inventory, type Known } from "./inventory";
import { parseNetDev, readText } from "./procfs";
import { RateTracker } from "./rates";

/** What the collector needs; everything but engine, dataDir and log has a default. */
export interface CollectorDeps {
  /**
   * The Docker engine, or a getter read at each tick (the server's `ctx.docker.engine` is set once detection finds
   * it). Without an engine a tick has the host sample and no containers.
   */
  engine: Engine | null | (() => Engine | null);
  /** Sundeck's data directory: its disk is the host's `disk*` figures. */
  dataDir: string;
  log: Log;
  /** Tick time, ms since the epoch (default Date.now). */
  now?: () => number;
  /** Monotonic ms the rates are computed over (default performance.now); tests drive it with `now`. */
  elapsed?: () => number;
  /** Where /proc is (default "/proc"); tests point it at a fixture tree. */
  procRoot?: string;
  /** Where the cgroup hierarchy is mounted (default "/sys/fs/cgroup"); tests point it at a fixture tree. */
  cgroupRoot?: string;
  /** "auto": cgroup files where readable, the Engine API otherwise (default); "engine": always the Engine API. */
  source?: "auto" | "engine";
  /** Inspect requests in flight at once (default 8). */
  concurrency?: number;
  /**
   * Stats requests in flight at once (default 64). The engine answers each on its next one-second collection cycle,
   * so they wait rather than work: fewer at a time would make 100 containers take longer than a tick.
   */
  statsConcurrency?: number;
  /** Re-inspect each container at least this often for its restart count, ms (default 60 s). */
  inspectEveryMs?: number;
}

/** The collector: `collect()` reads one tick; a call while one is in flight joins it. */
export interface Collector {
  collect(): Promise<Tick>;
  close?(): void;
}

/** How long a failed `GET /info` (for the Docker root dir) is not asked again, ms. */
const INFO_RETRY_MS = 60_000;

/** Build a collector; it keeps per-container state (sources, previous counters) between ticks. */
export function createCollector(deps: CollectorDeps): Collector {
  const now = deps.now ?? Date.now;
  const elapsed = deps.elapsed ?? (() => performance.now());
  const procRoot = deps.procRoot ?? "/proc";
  const cgroupRoot = deps.cgroupRoot ?? "/sys/fs/cgroup";
  const concurrency = deps.concurrency ?? 8;
  const engineOf = () => (typeof deps.engine === "function" ? deps.engine() : deps.engine);
  const inventory = new Inventory({ inspectEveryMs: deps.inspectEveryMs ?? 60_000, concurrency });
  const host = new HostReader({ procRoot, dataDir: deps.dataDir });
  const rates = new RateTracker();
  let dockerRoot: { dir: string | null; at: number } | null = null;
  let listFailing = false;
  let fallbackLogged = false;
  let inFlight: Promise<Tick> | null = null;

  async function dockerRootOf(engine: Engine, t: number): Promise<string | null> {
    if (dockerRoot && (dockerRoot.dir !== null || t - dockerRoot.at < INFO_RETRY_MS)) return dockerRoot.dir;
    try {
      const info = await engine.info();
      dockerRoot = { dir: typeof info?.DockerRootDir === "string" && info.DockerRootDir ? info.DockerRootDir : null, at: t };
    } catch {
      dockerRoot = { dir: null, at: t };
    }
    return dockerRoot.dir;
  }

  /** The cgroup of a running container, or the engine when its files (or its /proc entry) cannot be read. */
  function sourceOf(k: Known): Known["source"] {
    if (deps.source === "engine") return { kind: "engine" };
    // no pid yet (the inspect failed): ask the engine this tick, decide once the pid is known
    if (!k.pid) return null;
    const procCgroup = readText(join(procRoot, String(k.pid), "cgroup"));
    // the pid is the engine's (host pid namespace); trust our /proc entry only if it is that container's process
    const pidOurs = procCgroup?.includes(k.id) ?? false;
    const layout = findCgroup(cgroupRoot, k.id, pidOurs ? procCgroup : null);
    if (layout && (pidOurs || !k.ownNetwork)) return { kind: "cgroup", layout };
    if (!fallbackLogged) {
      fallbackLogged = true;
      deps.log.info("container cgroup files not readable, reading stats from the engine", { container: k.name });
    }
    return { kind: "engine" };
  }

  /** Counters from the cgroup files and /proc/<pid>/net/dev, or null when they could not be read. */
  function readLocal(k: Known, layout: Extract<Known["source"], { kind: "cgroup" }>["layout"]): Counters | null {
    const cg = readCgroup(layout);
    if (!cg) return null;
    if (!k.ownNetwork) return { ...cg, netRx: null, netTx: null };
    const text = k.pid ? readText(join(procRoot, String(k.pid), "net/dev")) : null;
    const net = text === null ? null : parseNetDev(text);
    if (!net) return null;
    return { ...cg, netRx: net.rx, netTx: net.tx };
  }

  async function containers(engine: Engine, known: Known[], t: number): Promise<ContainerSample[]> {
    const read = new Map<string, { key: string; at: number; c: Counters }>();
    const viaEngine: Known[] = [];
    for (const k of known) {
      if (k.state !== "running") continue;
      k.source ??= sourceOf(k);
      if (k.source?.kind !== "cgroup") {
        viaEngine.push(k);
        continue;
      }
      const at = elapsed();
      const c = readLocal(k, k.source.layout);
      if (c) {
        read.set(k.id, { key: `${k.id}:cgroup`, at, c });
      } else {
        // the cgroup or the process went away (a restart between ticks): look again, and ask the engine meanwhile
        k.source = null;
        inventory.markStale(k.id);
        viaEngine.push(k);
      }
    }
    const stats = await engineStats(
      engine,
      viaEngine.map((k) => k.id),
      deps.statsConcurrency ?? 64,
    );
    for (const [id, s] of stats) read.set(id, { key: `${id}:engine`, at: s.at ?? now(), c: s.counters });

    rates.retain(new Set([...read.values()].map((r) => r.key)));
    return known.map((k) => {
      const r = read.get(k.id);
      const running = k.state === "running";
      const base: ContainerSample = {
        t,
        containerId: k.id,
        name: k.name,
        app: k.app,
        service: k.service,
        running,
        cpuPct: null,
        cpuLimitPct: null,
        memBytes: null,
        memLimitBytes: running ? k.memLimitBytes : null,
        netRxBps: null,
        netTxBps: null,
        blkReadBps: null,
        blkWriteBps: null,
        restarts: k.restarts,
      };
      if (!r) return base;
      const rate = rates.update(r.key, r.at, r.c);
      if (rate.reset) inventory.markStale(k.id);
      return {
        ...base,
        cpuPct: rate.cpuPct,
        cpuLimitPct: rate.cpuPct !== null && k.cpuLimitCores ? rate.cpuPct / k.cpuLimitCores : null,
        memBytes: r.c.memBytes,
        netRxBps: rate.netRxBps,
        netTxBps: rate.netTxBps,
        blkReadBps: rate.blkReadBps,
        blkWriteBps: rate.blkWriteBps,
      };
    });
  }

  async function tick(): Promise<Tick> {
    const t = now();
    const engine = engineOf();
    const root = engine ? await dockerRootOf(engine, t) : null;
    const hostSample = host.read(t, elapsed(), root);
    let samples: ContainerSample[] = [];
    if (engine) {
      try {
        const known = await inventory.refresh(engine, t);
        if (listFailing) deps.log.info("container metrics back: the engine answers again");
        listFailing = false;
        samples = await containers(engine, known, t);
      } catch (e) {
        if (!listFailing) deps.log.warn("container metrics unavailable: cannot list containers", { error: String(e) });
        listFailing = true;
      }
    }
    return { t, containers: samples, host: hostSample };
  }

  return {
    collect() {
      inFlight ??= tick().finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  };
}
