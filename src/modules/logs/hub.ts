/**
 * The log hub: at most one engine follow per container, however many streams watch it. A feed starts with its first
 * viewer and stops a while after its last one leaves (a reconnecting viewer finds it still there). When the last feed
 * has stopped the hub asks for one full garbage collection: an idle server allocates next to nothing, so the engine's
 * own collector would leave the lines of a busy spell (tens of MiB after a thousand streams) in memory for minutes.
 */
import type { Engine } from "../../docker/types";
import type { Log } from "../../log/logger";
import { ContainerFeed, type FeedOptions, type FeedViewer } from "./feed";

/** Least time between two idle collections; a hub that goes idle sooner waits for it (if still idle then). */
export const IDLE_COLLECT_EVERY_MS = 30_000;
/**
 * Feeds lingering without viewers: a user stepping through every container they can see would otherwise keep an
 * engine follow and a ring (up to 256 KiB) for each, for the whole linger.
 */
export const MAX_IDLE_FEEDS = 32;

export interface LogHubOptions {
  engine: () => Engine | null;
  log: Log;
  now?: () => number;
  /** Recent lines kept per container (serve `tail` without asking the engine again). */
  ringLines?: number;
  ringBytes?: number;
  /** How long a feed without viewers keeps following. */
  lingerMs?: number;
  /** Most feeds lingering without viewers at once; past it the one idle longest stops (default MAX_IDLE_FEEDS). */
  maxIdle?: number;
  retryMs?: number;
  retryMaxMs?: number;
  giveUpMs?: number;
  /** The collection run when the last feed stops; null for none. Default: a full, synchronous `Bun.gc(true)`. */
  collect?: (() => void) | null;
  /** Least time between two collections (default IDLE_COLLECT_EVERY_MS). */
  collectEveryMs?: number;
}

/** What the hub holds, for operators and tests. */
export interface LogHubStats {
  /** Containers followed now. */
  feeds: number;
  /** Viewers of those feeds. */
  viewers: number;
  /** Follows opened on the engine since start (one per feed, plus retries). */
  follows: number;
  /** Collections run because the hub went idle, and how long the last one took (ms). */
  collections: number;
  lastCollectMs: number;
}

/** Build the hub. */
export function createLogHub(o: LogHubOptions) {
  const feeds = new Map<string, ContainerFeed>();
  const idle = new Map<ContainerFeed, ReturnType<typeof setTimeout>>();
  const now = o.now ?? Date.now;
  const collect = o.collect === undefined ? () => Bun.gc(true) : o.collect;
  const collectEvery = o.collectEveryMs ?? IDLE_COLLECT_EVERY_MS;
  let follows = 0;
  let stopped = false;
  let collections = 0;
  let lastCollectMs = 0;
  let lastCollectAt = Number.NEGATIVE_INFINITY;
  let collectTimer: ReturnType<typeof setTimeout> | undefined;
  const options: FeedOptions = {
    engine: o.engine,
    log: o.log,
    now,
    ringLines: o.ringLines ?? 1000,
    ringBytes: o.ringBytes ?? 256 * 1024,
    retryMs: o.retryMs ?? 1000,
    retryMaxMs: o.retryMaxMs ?? 30_000,
    giveUpMs: o.giveUpMs ?? 60_000,
    ended: (f) => forget(f),
  };

  const forget = (f: ContainerFeed) => {
    clearTimeout(idle.get(f));
    idle.delete(f);
    follows += f.follows;
    if (feeds.get(f.id) === f) feeds.delete(f.id);
    if (feeds.size === 0) wentIdle();
  };

  /**
   * The last feed stopped: collect once, on a later turn of the event loop (the aborted follows and the closing
   * sockets let go of their buffers first), or when the rate limit allows if the hub is still idle then.
   */
  const wentIdle = () => {
    if (!collect || stopped || collectTimer) return;
    collectTimer = setTimeout(
      () => {
        collectTimer = undefined;
        if (feeds.size === 0 && !stopped) collectNow();
      },
      Math.max(0, lastCollectAt + collectEvery - now()),
    );
    collectTimer.unref?.();
  };

  /** Stop `f` after the linger unless a viewer comes first (`watch` cancels the timer). */
  const linger = (f: ContainerFeed) => {
    clearTimeout(idle.get(f));
    const t = setTimeout(() => {
      if (f.viewerCount > 0) return;
      f.stop();
      forget(f);
    }, o.lingerMs ?? 30_000);
    t.unref?.();
    idle.set(f, t);
    // the map keeps insertion order: the first is the one idle longest
    for (const [oldest, timer] of idle) {
      if (idle.size <= (o.maxIdle ?? MAX_IDLE_FEEDS)) break;
      clearTimeout(timer);
      oldest.stop();
      forget(oldest);
    }
  };

  const collectNow = () => {
    if (!collect) return;
    const t0 = performance.now();
    collect();
    lastCollectMs = performance.now() - t0;
    lastCollectAt = now();
    collections++;
    o.log.debug("log hub idle: garbage collected", { ms: Math.round(lastCollectMs) });
  };

  return {
    /** The feed of a container, started on first use. */
    feed(id: string): ContainerFeed {
      let f = feeds.get(id);
      if (!f) {
        f = new ContainerFeed(id, options);
        feeds.set(id, f);
        // busy again: a collection deferred by the rate limit would only pause a hub with work to do
        clearTimeout(collectTimer);
        collectTimer = undefined;
        // a stream that closes before it watches (its client left while the history loaded) would leave the feed
        // following with nobody to stop it: it lingers once its history is in, unless a viewer came by then
        const started = f;
        void started.ready.then(() => {
          if (started.viewerCount === 0 && !started.end && feeds.get(started.id) === started) linger(started);
        });
      }
      return f;
    },

    /** Whether `f` is the feed the hub follows its container with (a stopped or ended one is not). */
    current(f: ContainerFeed): boolean {
      return feeds.get(f.id) === f;
    },

    /** Watch a feed; returns the function that stops watching (the feed lingers, then stops, when none is left). */
    watch(f: ContainerFeed, v: FeedViewer): () => void {
      clearTimeout(idle.get(f));
      idle.delete(f);
      f.add(v);
      return () => {
        f.remove(v);
        if (f.viewerCount > 0 || f.end || feeds.get(f.id) !== f) return;
        linger(f);
      };
    },

    stats(): LogHubStats {
      let viewers = 0;
      let open = 0;
      for (const f of feeds.values()) {
        viewers += f.viewerCount;
        open += f.follows;
      }
      return { feeds: feeds.size, viewers, follows: follows + open, collections, lastCollectMs };
    },

    /** Stop every follow (server shutdown); no collection follows. */
    stop(): void {
      stopped = true;
      clearTimeout(collectTimer);
      collectTimer = undefined;
      for (const f of [...feeds.values()]) {
        f.stop();
        forget(f);
      }
    },
  };
}

export type LogHub = ReturnType<typeof createLogHub>;
