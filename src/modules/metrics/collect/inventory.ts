/**
 * Which containers are measured and what is known about each: the engine's list of containers carrying a compose
 * project label, mapped back to the app and service, and per container what only an inspect tells (init pid, restart
 * count, CPU and memory limits, network mode). Inspects are cached: redone when the container's state changes, when
 * the reader saw it restart (counters went backwards, its pid vanished), and otherwise about once a minute.
 */
import { projectName } from "../../../docker/naming";
import type { ContainerSummary, Engine } from "../../../docker/types";
import { isSlug } from "../../../shared/slug";
import type { CgroupLayout } from "./cgroup";
import { eachLimited } from "./engine-stats";

/** One measured container and what is cached about it. */
export interface Known {
  id: string;
  name: string;
  app: string;
  service: string;
  /** State from the last list (running, exited, ...). */
  state: string;
  /** Init pid of the running container (host pid namespace), from inspect. */
  pid: number | null;
  restarts: number | null;
  /** CPU limit in cores (NanoCpus, CpuQuota/CpuPeriod or the cpuset, the smallest), null without one. */
  cpuLimitCores: number | null;
  memLimitBytes: number | null;
  /** False when the network namespace is the host's or another container's: its traffic is not this container's. */
  ownNetwork: boolean;
  /** Tick time of the last inspect; 0 before the first. */
  inspectedAt: number;
  /** Inspect again on the next refresh (the reader saw a restart). */
  stale: boolean;
  /** Where the counters come from: cgroup files (found once), the engine, or not decided yet. */
  source: { kind: "cgroup"; layout: CgroupLayout } | { kind: "engine" } | null;
}

const PREFIX = projectName("");
const PROJECT_LABEL = "com.docker.compose.project";

/** The app slug of a compose project Sundeck runs (`sundeck-<slug>`), or null for any other project. */
export function appOfProject(project: string | null | undefined): string | null {
  if (!project?.startsWith(PREFIX)) return null;
  const slug = project.slice(PREFIX.length);
  return isSlug(slug) ? slug : null;
}

/** The CPU limit in cores an inspect's HostConfig sets, or null. */
export function cpuLimitCores(hc: any): number | null {
  const limits: number[] = [];
  if (hc?.NanoCpus > 0) limits.push(hc.NanoCpus / 1e9);
  if (hc?.CpuQuota > 0) limits.push(hc.CpuQuota / (hc.CpuPeriod > 0 ? hc.CpuPeriod : 100_000));
  const cpus = cpusetSize(hc?.CpusetCpus);
  if (cpus > 0) limits.push(cpus);
  return limits.length ? Math.min(...limits) : null;
}

/** Number of CPUs in a cpuset list ("0-3,6"); 0 when empty or unreadable. */
export function cpusetSize(list: unknown): number {
  if (typeof list !== "string" || !list.trim()) return 0;
  let n = 0;
  for (const part of list.split(",")) {
    const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part);
    if (!m) return 0;
    n += m[2] === undefined ? 1 : Math.max(0, Number(m[2]) - Number(m[1]) + 1);
  }
  return n;
}

/** The containers of Sundeck apps and their cached inspect data, kept across ticks. */
export class Inventory {
  private known = new Map<string, Known>();

  constructor(
    private readonly o: {
      /** Re-inspect a container at least this often (ms), for its restart count. */
      inspectEveryMs: number;
      /** Engine requests in flight at once. */
      concurrency: number;
    },
  ) {}

  /** List the containers, inspect those that need it, forget the ones gone; returns them in list order. */
  async refresh(engine: Engine, t: number): Promise<Known[]> {
    const list = await engine.containers({ labels: [PROJECT_LABEL] });
    const seen: Known[] = [];
    for (const c of list) {
      const k = this.entry(c);
      if (k) seen.push(k);
    }
    const ids = new Set(seen.map((k) => k.id));
    for (const id of this.known.keys()) if (!ids.has(id)) this.known.delete(id);
    const due = seen.filter((k) => k.stale || t - k.inspectedAt >= this.o.inspectEveryMs + jitter(k.id, this.o.inspectEveryMs));
    await eachLimited(due, this.o.concurrency, (k) => this.inspect(engine, k, t));
    return seen;
  }

  /** Ask for a fresh inspect on the next refresh (the reader saw the container restart). */
  markStale(id: string): void {
    const k = this.known.get(id);
    if (k) k.stale = true;
  }

  private entry(c: ContainerSummary): Known | null {
    const app = appOfProject(c.project);
    // one-off containers (`compose run`) are not part of the app's running services
    if (!app || !c.service || c.labels["com.docker.compose.oneoff"]?.toLowerCase() === "true") return null;
    let k = this.known.get(c.id);
    if (!k) {
      k = {
        id: c.id,
        name: c.name,
        app,
        service: c.service,
        state: c.state,
        pid: null,
        restarts: null,
        cpuLimitCores: null,
        memLimitBytes: null,
        ownNetwork: true,
        inspectedAt: 0,
        stale: true,
        source: null,
      };
      this.known.set(c.id, k);
    } else if (k.state !== c.state) {
      k.stale = true;
    }
    k.state = c.state;
    k.name = c.name;
    return k;
  }

  private async inspect(engine: Engine, k: Known, t: number): Promise<void> {
    let info: any;
    try {
      info = await engine.inspect(k.id);
    } catch {
      // removed since the list: the next list forgets it
      return;
    }
    const pid = Number(info?.State?.Pid ?? 0);
    const newPid = pid > 0 ? pid : null;
    // a new process means a new cgroup and another /proc entry: find the source again
    if (newPid !== k.pid) k.source = null;
    k.pid = newPid;
    k.restarts = typeof info?.RestartCount === "number" ? info.RestartCount : null;
    const hc = info?.HostConfig ?? {};
    k.cpuLimitCores = cpuLimitCores(hc);
    k.memLimitBytes = hc.Memory > 0 ? hc.Memory : null;
    const mode = String(hc.NetworkMode ?? "");
    k.ownNetwork = mode !== "host" && !mode.startsWith("container:");
    k.inspectedAt = t;
    k.stale = false;
  }
}

/** A per-container offset of up to half the period, so containers first seen together are not all inspected at once. */
function jitter(id: string, period: number): number {
  let h = 0;
  for (let i = 0; i < Math.min(id.length, 12); i++) h = (h * 31 + id.charCodeAt(i)) >>> 0;
  return (h % 1000) * (period / 2000);
}
