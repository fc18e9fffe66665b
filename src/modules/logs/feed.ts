/**
 * One container's log feed: a single follow on the Engine API shared by every viewer, with a ring of recent lines.
 * It ends as "stopped" only when the engine says the container is not running; a follow that breaks while the
 * container runs is retried with backoff, and an engine that stays unreachable ends the feed with its error.
 */
import { type Engine, EngineError } from "../../docker/types";
import type { Log } from "../../log/logger";
import { type HubLine, hubLine, keySeconds, LineRing } from "./ring";

/** How a feed ended. */
export type FeedEnd = { kind: "stopped" } | { kind: "error"; message: string };

/** A viewer of a feed. */
export interface FeedViewer {
  line(l: HubLine): void;
  end(e: FeedEnd): void;
}

export interface FeedOptions {
  /** The engine as detected now (read at each call). */
  engine: () => Engine | null;
  log: Log;
  now: () => number;
  ringLines: number;
  ringBytes: number;
  /** First retry delay of a broken follow; doubles up to `retryMaxMs`. */
  retryMs: number;
  retryMaxMs: number;
  /** A follow failing this long while the container runs ends the feed with the engine's error. */
  giveUpMs: number;
  /** Told once when the feed ends (the hub forgets it). */
  ended: (f: ContainerFeed) => void;
}

export class ContainerFeed {
  readonly ring: LineRing;
  /** Resolves once the ring holds the container's recent history. */
  readonly ready: Promise<void>;
  /** Whether the ring started with the whole log (the history was shorter than the ring). */
  private historyComplete = false;
  private readonly viewers = new Set<FeedViewer>();
  private readonly ac = new AbortController();
  private lastKey = "";
  private atLastKey = new Set<string>();
  private endedWith: FeedEnd | null = null;
  /** Follows opened on the engine (retries included). */
  follows = 0;

  constructor(
    readonly id: string,
    private readonly o: FeedOptions,
  ) {
    this.ring = new LineRing(o.ringLines, o.ringBytes);
    const startedAt = o.now();
    this.ready = this.loadHistory();
    void this.ready.then(() => this.follow(startedAt));
  }

  /** The ring holds every line since the container started. */
  get complete(): boolean {
    return this.historyComplete && this.ring.evicted === 0;
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  get end(): FeedEnd | null {
    return this.endedWith;
  }

  /** Add a viewer: it gets every line accepted after this call, then the end. */
  add(v: FeedViewer): void {
    if (this.endedWith) v.end(this.endedWith);
    else this.viewers.add(v);
  }

  remove(v: FeedViewer): void {
    this.viewers.delete(v);
  }

  /**
   * Stop following (no viewer is told: they are gone, or the server is stopping) and let go of the lines: the
   * follow's pending read keeps this object reachable until the engine's socket closes, its ring need not be.
   */
  stop(): void {
    this.ac.abort();
    this.viewers.clear();
    this.ring.clear();
    this.atLastKey = new Set();
  }

  private async loadHistory(): Promise<void> {
    const engine = this.o.engine();
    if (!engine) return;
    let n = 0;
    try {
      for await (const l of engine.logs(this.id, { tail: this.o.ringLines, follow: false, signal: this.ac.signal })) {
        // a line still being written: the follow, from the last whole line on, brings it whole (kept, it came twice)
        if (l.partial) continue;
        this.accept(hubLine(l));
        n++;
      }
      this.historyComplete = n < this.o.ringLines;
    } catch {
      // the follow below finds out what is wrong and says so
    }
  }

  private async follow(startedAt: number): Promise<void> {
    let delay = this.o.retryMs;
    let failingSince: number | null = null;
    let lastError = "";
    while (!this.ac.signal.aborted) {
      const engine = this.o.engine();
      try {
        if (!engine) throw new Error("docker is not available");
        // from the last line kept (a little before: what repeats is dropped by key), else from the start of history
        const since = this.lastKey ? keySeconds(this.lastKey) - 0.001 : startedAt / 1000 - 1;
        this.follows++;
        for await (const l of engine.logs(this.id, { since, follow: true, signal: this.ac.signal })) {
          failingSince = null;
          delay = this.o.retryMs;
          this.accept(hubLine(l));
        }
      } catch (e) {
        lastError = (e as Error).message;
      }
      if (this.ac.signal.aborted) return;
      const running = await this.running(engine);
      if (running === false) return this.finish({ kind: "stopped" });
      // the follow broke while the container runs (or the engine cannot say): try again, for a while
      failingSince ??= this.o.now();
      if (this.o.now() - failingSince >= this.o.giveUpMs) {
        return this.finish({ kind: "error", message: `docker engine error: ${lastError || "the log follow keeps ending"}` });
      }
      this.o.log.warn("container log follow broke; retrying", { container: this.id.slice(0, 12), error: lastError });
      await new Promise<void>((r) => {
        const t = setTimeout(r, delay);
        this.ac.signal.addEventListener(
          "abort",
          () => {
            clearTimeout(t);
            r();
          },
          { once: true },
        );
      });
      delay = Math.min(delay * 2, this.o.retryMaxMs);
    }
  }

  /** Whether the container runs: false when the engine says it does not (or it is gone), null when it cannot say. */
  private async running(engine: Engine | null): Promise<boolean | null> {
    if (!engine) return null;
    try {
      const info = await engine.inspect(this.id);
      return Boolean(info?.State?.Running);
    } catch (e) {
      return e instanceof EngineError && e.status === 404 ? false : null;
    }
  }

  /** Keep a line unless the follow repeats it, and hand it to every viewer. */
  private accept(l: HubLine): void {
    // a read already under way when the feed stopped must not fill the released ring again
    if (this.ac.signal.aborted) return;
    if (l.key) {
      if (l.key < this.lastKey) return;
      const id = `${l.stream}\u0000${l.line}`;
      if (l.key === this.lastKey) {
        if (this.atLastKey.has(id)) return;
      } else {
        this.lastKey = l.key;
        this.atLastKey = new Set();
      }
      this.atLastKey.add(id);
    }
    this.ring.push(l);
    for (const v of this.viewers) v.line(l);
  }

  private finish(e: FeedEnd): void {
    this.endedWith = e;
    this.ac.abort();
    for (const v of [...this.viewers]) v.end(e);
    // the ring stays: a stream opening right now still sends it as history before the end; the hub forgets this feed
    this.viewers.clear();
    this.o.ended(this);
  }
}
