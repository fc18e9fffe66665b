/**
 * The metrics service (`ctx.metrics`): every `everyMs` (10 s) it runs the collector, writes the tick's raw rows,
 * rolls up the buckets that have closed and, about once a minute, prunes past retention; then it tells the tick's
 * listeners (the alert evaluator). Passes never overlap: a slot that comes while one is still running is skipped.
 * Ticks are scheduled on the collection grid plus a small offset, so each lands in its own raw bucket. A failing
 * collector is logged and retried on the next slot, never fatal. It answers the range queries and is the
 * MetricsReader of the alert evaluator and the Prometheus exposition.
 */
import type { Db } from "../../db";
import type { Clock } from "../../lib/time";
import type { Log } from "../../log/logger";
import { createMetricsQuery } from "./query";
import type { Tier } from "./request-stats";
import { createRollup } from "./rollup";
import type { MetricsReader, Tick } from "./samples";
import { createMetricsStore } from "./store";

/** Where ticks come from (H-collect's cgroup and engine collector in production). */
export interface Collector {
  collect(): Promise<Tick>;
  /** Release what the collector holds (engine streams), at stop. */
  close?(): void;
}

export interface MetricsServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  /** The configured tiers, finest first (parseTiers). */
  tiers: Tier[];
  /** Null: no collection (stored metrics are still rolled up, pruned and answered). */
  collector: Collector | null;
  /** Collection interval, ms (10 s); 0 turns the timer off (tests drive `tick()` themselves). */
  everyMs?: number;
  /** Least time between two prunes, ms (1 min). */
  pruneEveryMs?: number;
}

/** Build the service; `start()` begins the catch-up pass and the timer. */
export function createMetricsService({
  db,
  clock,
  log,
  tiers,
  collector,
  everyMs = 10_000,
  pruneEveryMs = 60_000,
}: MetricsServiceDeps) {
  const store = createMetricsStore({ db, tiers });
  const rollup = createRollup({ db, tiers, log });
  const query = createMetricsQuery({ db, clock, tiers, nameOf: (id) => store.nameOf(id) });
  const longest = Math.max(...tiers.map((t) => t.retentionMs));
  const listeners = new Set<(tick: Tick) => void>();
  let last: Tick | null = null;
  let lastPrune = Number.NEGATIVE_INFINITY;
  let running: Promise<unknown> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = true;

  /** Run `fn` unless a pass is running (then null): passes never overlap. */
  function exclusive<T>(fn: () => Promise<T>): Promise<T> | null {
    if (running) return null;
    const p = fn().finally(() => {
      running = null;
    });
    running = p;
    return p;
  }

  /** Roll up what has closed and, when due (or `force`), prune. */
  async function maintain(force: boolean): Promise<void> {
    const now = clock.now();
    await rollup.rollUp(now);
    if (force || now - lastPrune >= pruneEveryMs) {
      lastPrune = now;
      await rollup.prune(now);
      store.pruneNames(now - longest);
    }
  }

  /** Store a tick (raw rows, container names, latest) and tell the listeners. */
  function record(tick: Tick): void {
    store.write(tick);
    last = tick;
    for (const l of listeners) {
      try {
        l(tick);
      } catch (e) {
        log.error("metrics tick listener failed", { error: (e as Error).message });
      }
    }
  }

  async function pass(): Promise<Tick | null> {
    let tick: Tick | null = null;
    if (collector) {
      try {
        tick = await collector.collect();
      } catch (e) {
        log.warn("metrics collection failed", { error: (e as Error).message });
      }
    }
    try {
      if (tick) record(tick);
      await maintain(false);
    } catch (e) {
      log.error("metrics store failed", { error: (e as Error).message });
    }
    return tick;
  }

  function schedule(): void {
    if (stopped || everyMs <= 0) return;
    // on the grid plus an offset, so a tick does not straddle a raw bucket boundary with the timer's jitter
    const offset = Math.min(1000, Math.floor(everyMs / 10));
    const now = clock.now();
    const next = now - ((now - offset) % everyMs) + everyMs;
    timer = setTimeout(
      () => {
        timer = null;
        const p = exclusive(pass);
        if (p === null) log.debug("metrics tick skipped: the previous pass is still running");
        void (p ?? Promise.resolve()).finally(schedule);
      },
      Math.max(0, next - now),
    );
    timer.unref?.();
  }

  const reader: MetricsReader = {
    latest: () => last,
    containerSamples: (sinceMs, app) => store.containerSamples(sinceMs, app),
    hostSamples: (sinceMs) => store.hostSamples(sinceMs),
    onTick(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };

  return {
    ...reader,
    tiers,
    /** Container metrics of an app over the last `rangeMs` (the route adds `range`). */
    app: query.app,
    /** Host metrics over the last `rangeMs`. */
    system: query.system,

    /**
     * Catch up (roll up every closed bucket not yet written, prune) and start the timer. Resolves when the
     * catch-up is done; errors are logged.
     */
    async start(): Promise<void> {
      if (!stopped) return;
      stopped = false;
      await exclusive(async () => {
        try {
          await maintain(true);
        } catch (e) {
          log.error("metrics catch-up failed", { error: (e as Error).message });
        }
      });
      schedule();
    },

    /** Stop the timer and wait for a pass in flight (the database may close after this resolves). */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running?.catch(() => {});
      collector?.close?.();
    },

    /** One pass now (collect, store, roll up, prune when due); null when one is running or collection failed. */
    async tick(): Promise<Tick | null> {
      return (await exclusive(pass)) ?? null;
    },

    /** Store a tick as if collected (imports, tests) and tell the listeners; no rollup. */
    record,

    /** Roll up and prune now, as the catch-up at start does (nothing when a pass is running). */
    maintain: async (): Promise<void> => {
      await exclusive(() => maintain(true));
    },
  };
}

export type MetricsService = ReturnType<typeof createMetricsService>;
