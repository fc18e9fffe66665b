/**
 * The log hub: at most one engine follow per container, however many streams watch it. A feed starts with its first
 * viewer and stops a while after its last one leaves (a reconnecting viewer finds it still there).
 */
import type { Engine } from "../../docker/types";
import type { Log } from "../../log/logger";
import { ContainerFeed, type FeedOptions, type FeedViewer } from "./feed";

export interface LogHubOptions {
  engine: () => Engine | null;
  log: Log;
  now?: () => number;
  /** Recent lines kept per container (serve `tail` without asking the engine again). */
  ringLines?: number;
  ringBytes?: number;
  /** How long a feed without viewers keeps following. */
  lingerMs?: number;
  retryMs?: number;
  retryMaxMs?: number;
  giveUpMs?: number;
}

/** What the hub holds, for operators and tests. */
export interface LogHubStats {
  /** Containers followed now. */
  feeds: number;
  /** Viewers of those feeds. */
  viewers: number;
  /** Follows opened on the engine since start (one per feed, plus retries). */
  follows: number;
}

/** Build the hub. */
export function createLogHub(o: LogHubOptions) {
  const feeds = new Map<string, ContainerFeed>();
  const idle = new Map<ContainerFeed, ReturnType<typeof setTimeout>>();
  let follows = 0;
  const options: FeedOptions = {
    engine: o.engine,
    log: o.log,
    now: o.now ?? Date.now,
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
  };

  return {
    /** The feed of a container, started on first use. */
    feed(id: string): ContainerFeed {
      let f = feeds.get(id);
      if (!f) {
        f = new ContainerFeed(id, options);
        feeds.set(id, f);
      }
      return f;
    },

    /** Watch a feed; returns the function that stops watching (the feed lingers, then stops, when none is left). */
    watch(f: ContainerFeed, v: FeedViewer): () => void {
      clearTimeout(idle.get(f));
      idle.delete(f);
      f.add(v);
      return () => {
        f.remove(v);
        if (f.viewerCount > 0 || f.end || feeds.get(f.id) !== f) return;
        const t = setTimeout(() => {
          if (f.viewerCount > 0) return;
          f.stop();
          forget(f);
        }, o.lingerMs ?? 30_000);
        t.unref?.();
        idle.set(f, t);
      };
    },

    stats(): LogHubStats {
      let viewers = 0;
      let open = 0;
      for (const f of feeds.values()) {
        viewers += f.viewerCount;
        open += f.follows;
      }
      return { feeds: feeds.size, viewers, follows: follows + open };
    },

    /** Stop every follow (server shutdown). */
    stop(): void {
      for (const f of [...feeds.values()]) {
        f.stop();
        forget(f);
      }
    },
  };
}

export type LogHub = ReturnType<typeof createLogHub>;
