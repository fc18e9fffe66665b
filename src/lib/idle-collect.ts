/**
 * One full garbage collection once a burst of work has ended (issue 16). An idle server allocates next to nothing, so
 * the engine's own collector can leave what a burst of deploys allocated (compose output, prepared projects, the
 * engine's replies) resident for minutes: measured 6-9 MiB of anonymous memory with 20 apps, given back by one
 * `Bun.gc(true)`. `poke()` at the end of each unit of work; the collection runs `quietMs` after the last poke, when
 * `idle()` still says nothing is in flight, so a batch of deploys costs one collection, not one per deploy.
 */

/** Quiet time after the last poke before collecting; a collection of Sundeck's heap takes a few ms to tens of ms. */
export const IDLE_COLLECT_QUIET_MS = 5_000;

export interface IdleCollectorOptions {
  /** The collection (default: a full, synchronous `Bun.gc(true)`). */
  collect?: () => void;
  /** Whether no work is in flight now; a busy process waits for its next poke (default: always idle). */
  idle?: () => boolean;
  quietMs?: number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
}

/** A debounced full collection: `poke` after each unit of work, `stop` at shutdown, `collections` for tests. */
export interface IdleCollector {
  poke(): void;
  stop(): void;
  readonly collections: number;
}

export function createIdleCollector(o: IdleCollectorOptions = {}): IdleCollector {
  const collect = o.collect ?? (() => Bun.gc(true));
  const idle = o.idle ?? (() => true);
  const quietMs = o.quietMs ?? IDLE_COLLECT_QUIET_MS;
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
  let collections = 0;
  let stopped = false;
  return {
    poke() {
      if (stopped) return;
      if (timer !== undefined) clearTimer(timer);
      timer = setTimer(() => {
        timer = undefined;
        if (stopped || !idle()) return;
        collect();
        collections++;
      }, quietMs);
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimer(timer);
      timer = undefined;
    },
    get collections() {
      return collections;
    },
  };
}
