/**
 * App status from the engine, never from compose output: one container listing for all apps, refreshed when Docker
 * reports a container event for a Sundeck project (debounced) and every few seconds as a safety net.
 */
import { exitCode } from "../../docker/exit-code";
import type { ContainerSummary, Engine } from "../../docker/types";
import type { Log } from "../../log/logger";
import type { AppStatus } from "../../shared/apps";
import type { AppRow } from "./repo";

export type { AppStatus };

const PREFIX = "sundeck-";

/** Past this many projects with events, one listing of everything is cheaper than one listing per project. */
const MAX_PROJECT_READS = 8;

/** Containers in service order, then by replica number. */
function sortContainers(list: ContainerSummary[]): ContainerSummary[] {
  return list.sort((a, b) => (a.service ?? "").localeCompare(b.service ?? "") || (a.number ?? 0) - (b.number ?? 0));
}

/** Status of one app from its containers and desired state. */
export function deriveStatus(app: AppRow, containers: ContainerSummary[], busy: boolean, engineUp: boolean): AppStatus {
  if (app.removedAt) return "removed";
  if (busy) return "deploying";
  if (!engineUp) return "unknown";
  if (app.stopped) return "stopped";
  if (containers.length === 0) return app.lastDeployStatus === "failed" ? "failed" : "stopped";
  const running = containers.filter((c) => c.state === "running");
  if (running.length === 0) {
    // nothing runs: a clean exit everywhere is a stop (by hand, or every job done); any other exit is a failure
    return containers.every((c) => c.state === "exited" && exitCode(c.status) === 0) ? "stopped" : "failed";
  }
  // with something running, containers that exited 0 are finished jobs and do not count against the app
  const live = containers.filter((c) => !(c.state === "exited" && exitCode(c.status) === 0));
  const ok = live.filter((c) => c.state === "running" && c.health !== "unhealthy");
  if (ok.length === live.length) return "running";
  return "degraded";
}

/** The live view of every app's containers. */
export class StatusBoard {
  private byProject = new Map<string, ContainerSummary[]>();
  private engineUp = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private confirm: ReturnType<typeof setTimeout> | undefined;
  private interval: ReturnType<typeof setInterval> | undefined;
  private events: AbortController | undefined;
  private refreshing: Promise<void> | null = null;
  /** What the next refresh reads: everything, or the projects that had events (asked while one may be in flight). */
  private wanted: { all: boolean; projects: Set<string> } = { all: false, projects: new Set() };
  /** Projects (or all) waiting for the debounced refresh, and for the confirming one a second later. */
  private soon = new Set<string>();
  private soonAll = false;
  private later = new Set<string>();
  private laterAll = false;
  private readonly listeners = new Set<() => void>();
  /** Refreshes done, for tests that wait on the board. */
  generation = 0;

  constructor(
    private readonly engine: () => Engine | null,
    private readonly log: Log,
    private readonly opts: { debounceMs?: number; everyMs?: number } = {},
  ) {}

  /** Containers of an app. */
  containers(slug: string): ContainerSummary[] {
    return this.byProject.get(PREFIX + slug) ?? [];
  }

  get up(): boolean {
    return this.engineUp;
  }

  /** Re-read one app's containers now (after the refresh in flight, whose listing may be older than the ask). */
  refreshApp(slug: string): Promise<void> {
    this.wanted.projects.add(PREFIX + slug);
    return this.schedule();
  }

  /** Re-read every container now (or right after the refresh in flight, whose listing may be older than the ask). */
  refresh(): Promise<void> {
    this.wanted.all = true;
    return this.schedule();
  }

  /**
   * Serve what was asked for: one listing of every container, or one per project that had an event (a burst of
   * deploys on a host of N apps would otherwise list all N apps' containers for each event: N^2 in all). Refreshes run
   * one at a time, in order; a request made while one runs is served by the next, which the returned promise awaits.
   */
  private schedule(): Promise<void> {
    if (this.refreshing) return this.refreshing;
    this.refreshing = (async () => {
      try {
        while (this.wanted.all || this.wanted.projects.size) {
          const { all, projects } = this.wanted;
          this.wanted = { all: false, projects: new Set() };
          await this.read(all || projects.size > MAX_PROJECT_READS ? null : projects);
          this.generation++;
          for (const l of this.listeners) l();
        }
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /** List every container (`projects` null) or only those of the given projects, and keep the result. */
  private async read(projects: ReadonlySet<string> | null): Promise<void> {
    const engine = this.engine();
    try {
      if (!engine) throw new Error("no engine");
      if (projects === null) {
        const all = await engine.containers({ labels: ["com.docker.compose.project"] });
        const next = new Map<string, ContainerSummary[]>();
        for (const c of all) {
          if (!c.project?.startsWith(PREFIX)) continue;
          const list = next.get(c.project) ?? [];
          list.push(c);
          next.set(c.project, list);
        }
        for (const list of next.values()) sortContainers(list);
        this.byProject = next;
      } else {
        // a new map, so a reader holding the old one sees it whole
        const next = new Map(this.byProject);
        for (const project of projects) {
          const list = sortContainers(await engine.containers({ project }));
          if (list.length) next.set(project, list);
          else next.delete(project);
        }
        this.byProject = next;
      }
      this.engineUp = true;
    } catch {
      this.engineUp = false;
    }
  }

  /**
   * Refresh soon (coalescing bursts of events), and once more a second later: the engine can list a container as
   * running just after its `die` event, and a `kill` brings no later event to correct that. With a project, only its
   * containers are read again; without, every container.
   */
  poke(project?: string): void {
    if (project) this.soon.add(project);
    else this.soonAll = true;
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.take(this.soon, this.soonAll);
        this.soon = new Set();
        this.soonAll = false;
      }, this.opts.debounceMs ?? 150);
    }
    if (project) this.later.add(project);
    else this.laterAll = true;
    clearTimeout(this.confirm);
    this.confirm = setTimeout(() => {
      this.take(this.later, this.laterAll);
      this.later = new Set();
      this.laterAll = false;
    }, 1000);
  }

  private take(projects: ReadonlySet<string>, all: boolean): void {
    if (all) this.wanted.all = true;
    for (const p of projects) this.wanted.projects.add(p);
    void this.schedule();
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Follow Docker events and refresh periodically until stopped. */
  async start(): Promise<void> {
    await this.refresh();
    this.interval = setInterval(() => void this.refresh(), this.opts.everyMs ?? 15_000);
    this.interval.unref?.();
    void this.follow();
  }

  stop(): void {
    clearInterval(this.interval);
    clearTimeout(this.timer);
    clearTimeout(this.confirm);
    this.events?.abort();
  }

  private async follow(): Promise<void> {
    let backoff = 1000;
    while (this.interval) {
      const engine = this.engine();
      const ac = new AbortController();
      this.events = ac;
      if (engine) {
        try {
          for await (const ev of engine.events({
            filters: { type: ["container"], label: ["com.docker.compose.project"] },
            signal: ac.signal,
          })) {
            backoff = 1000;
            const project = ev.attributes["com.docker.compose.project"] ?? "";
            if (project.startsWith(PREFIX)) this.poke(project);
          }
        } catch (e) {
          if (ac.signal.aborted) return;
          this.log.warn("docker events stream ended", { error: (e as Error).message });
        }
      }
      if (ac.signal.aborted) return;
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 30_000);
      void this.refresh();
    }
  }
}
