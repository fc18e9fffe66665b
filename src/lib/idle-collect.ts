/**
 * One full garbage collection once a burst of work has ended (issue 16). An idle server allocates next to nothing, so
 * the engine's own collector can leave what a burst of deploys allocated (compose output, prepared projects, the
 * engine's replies) resident for minutes: measured 6-9 MiB of anonymous memory with 20 apps, given back by one
 * `Bun.gc(true)`. `poke()` at the end of each unit of work; the collection runs `quietMs` after the last poke, when
 * `idle()` still says nothing is in flight, so a batch of deploys costs one collection, not one per deploy.
 *
 * With `shrink`, the end of a burst also drops the code the engine compiled for it (issue 26): `Bun.shrink()` deletes
 * every function's compiled code (bytecode is kept, and what runs next compiles again), collects, and gives free
 * pages back. After 100 deploys that was 9 MiB of code blocks, JIT code and the heap they pinned (91 -> 82 MiB). The
 * proxy's hot path compiles again too: at saturation its next second ran at about 60% of its rate, the one after at
 * full rate (docs/benchmarks.md), so it runs at most every `shrink.everyMs`; a burst that ends sooner after the last
 * one gets the plain collection now and the shrink when that time is up, if the process is idle then.
 */

/** Quiet time after the last poke before collecting; a collection of Sundeck's heap takes a few ms to tens of ms. */
export const IDLE_COLLECT_QUIET_MS = 5_000;

/** The least time between two shrinks (each costs the proxy about a second of recompiling at saturation). */
export const IDLE_SHRINK_EVERY_MS = 10 * 60_000;

export interface IdleCollectorOptions {
  /** The collection (default: a full, synchronous `Bun.gc(true)`). */
  collect?: () => void;
  /** Drop compiled code too, at most every `everyMs` (the run defaults to `Bun.shrink()`, which also collects). */
  shrink?: { run?: () => void; everyMs?: number };
  /** Whether no work is in flight now; a busy process waits for its next poke (default: always idle). */
  idle?: () => boolean;
  quietMs?: number;
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
}

/** A debounced full collection: `poke` after each unit of work, `stop` at shutdown, counters for tests. */
export interface IdleCollector {
  poke(): void;
  stop(): void;
  /** Collections run (a shrink counts as one). */
  readonly collections: number;
  /** Shrinks run. */
  readonly shrinks: number;
}

export function createIdleCollector(o: IdleCollectorOptions = {}): IdleCollector {
  const collect = o.collect ?? (() => Bun.gc(true));
  const shrink = o.shrink ? (o.shrink.run ?? (() => Bun.shrink())) : null;
  const everyMs = o.shrink?.everyMs ?? IDLE_SHRINK_EVERY_MS;
  const idle = o.idle ?? (() => true);
  const quietMs = o.quietMs ?? IDLE_COLLECT_QUIET_MS;
  const now = o.now ?? Date.now;
  const setTimer =
    o.setTimer ??
    ((fn: () => void, ms: number) => {
      const t = setTimeout(fn, ms);
      // a pending collection never keeps the process alive
      t.unref?.();
      return t;
    });
  const clearTimer = o.clearTimer ?? ((t: unknown) => clearTimeout(t as ReturnType<typeof setTimeout>));
  let timer: unknown;
  /** The shrink put off until `everyMs` after the last one. */
  let deferred: unknown;
  let lastShrink = Number.NEGATIVE_INFINITY;
  let collections = 0;
  let shrinks = 0;
  let stopped = false;

  const runShrink = () => {
    shrink!();
    lastShrink = now();
    shrinks++;
    collections++;
  };

  const fire = () => {
    timer = undefined;
    if (stopped || !idle()) return;
    const wait = lastShrink + everyMs - now();
    if (shrink && wait <= 0) return runShrink();
    collect();
    collections++;
    if (shrink && deferred === undefined)
      deferred = setTimer(() => {
        deferred = undefined;
        // busy then: the poke at the end of that work brings it back
        if (!stopped && idle()) runShrink();
      }, wait);
  };

  return {
    poke() {
      if (stopped) return;
      if (timer !== undefined) clearTimer(timer);
      timer = setTimer(fire, quietMs);
    },
    stop() {
      stopped = true;
      for (const t of [timer, deferred]) if (t !== undefined) clearTimer(t);
      timer = deferred = undefined;
    },
    get collections() {
      return collections;
    },
    get shrinks() {
      return shrinks;
    },
  };
}
