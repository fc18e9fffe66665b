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
  /** A refresh was asked for while one was in flight: its listing may predate the event, so run once more. */
  private again = false;
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

  /** Re-read every container now (or right after the refresh in flight, whose listing may be older than the ask). */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      const engine = this.engine();
      try {
        if (!engine) throw new Error("no engine");
        const all = await engine.containers({ labels: ["com.docker.compose.project"] });
        const next = new Map<string, ContainerSummary[]>();
        for (const c of all) {
          if (!c.project?.startsWith(PREFIX)) continue;
          const list = next.get(c.project) ?? [];
          list.push(c);
          next.set(c.project, list);
        }
        for (const list of next.values())
          list.sort((a, b) => (a.service ?? "").localeCompare(b.service ?? "") || (a.number ?? 0) - (b.number ?? 0));
        this.byProject = next;
        this.engineUp = true;
      } catch {
        this.engineUp = false;
      } finally {
        this.generation++;
        this.refreshing = null;
      }
      for (const l of this.listeners) l();
      if (this.again) {
        this.again = false;
        await this.refresh();
      }
    })();
    return this.refreshing;
  }

  /**
   * Refresh soon (coalescing bursts of events), and once more a second later: the engine can list a container as
   * running just after its `die` event, and a `kill` brings no later event to correct that.
   */
  poke(): void {
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.refresh();
      }, this.opts.debounceMs ?? 150);
    }
    clearTimeout(this.confirm);
    this.confirm = setTimeout(() => void this.refresh(), 1000);
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
            if ((ev.attributes["com.docker.compose.project"] ?? "").startsWith(PREFIX)) this.poke();
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
