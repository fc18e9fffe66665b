/**
 * Opt-in diagnostics for the memory and start benchmarks (issue 16); both are off unless their variable is set.
 *
 * - SUNDECK_DEBUG_START=1: `startTrace()` marks each start phase with the milliseconds since the process began, and
 *   the server logs them once it is ready.
 * - SUNDECK_DEBUG_MEMORY=1: on SIGUSR2 the process runs a full GC and logs one line with the runtime's heap
 *   statistics (`bun:jsc` heapStats and memoryUsage, process.memoryUsage) and SQLite's page cache setting.
 *   Only the process owner can send the signal; nothing is exposed over HTTP.
 */

import { heapStats, memoryUsage } from "bun:jsc";
import type { Database } from "bun:sqlite";

interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
}

/** Every tracer of the process writes here, so `sundeck serve` and the server's start share one list. */
const marks: Record<string, number> = {};

/** Phase marks in ms since the process started; `done()` returns them (empty when tracing is off). */
export function startTrace(env: Record<string, string | undefined> = process.env) {
  const on = env.SUNDECK_DEBUG_START === "1";
  return {
    mark(name: string) {
      if (on) marks[name] = Math.round(performance.now() * 10) / 10;
    },
    done(): Record<string, number> {
      return marks;
    },
  };
}

/** One snapshot after a full collection: what the memory benchmark logs. */
export function memorySnapshot(sqlite?: Database) {
  Bun.gc(true);
  const h = heapStats();
  const types = Object.entries(h.objectTypeCounts)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15);
  const pragma = (p: string) => Object.values(sqlite?.query(`PRAGMA ${p}`).get() ?? {})[0] ?? null;
  return {
    heap_size: h.heapSize,
    heap_capacity: h.heapCapacity,
    extra_memory: h.extraMemorySize,
    object_count: h.objectCount,
    top_types: Object.fromEntries(types),
    allocator: memoryUsage(),
    process: process.memoryUsage(),
    sqlite_cache_size: pragma("cache_size"),
    sqlite_page_size: pragma("page_size"),
    sqlite_page_count: pragma("page_count"),
  };
}

/** With SUNDECK_DEBUG_MEMORY=1, log a memory snapshot on each SIGUSR2; returns the remover. */
export function installMemoryDump(
  log: Logger,
  sqlite: Database,
  env: Record<string, string | undefined> = process.env,
): () => void {
  if (env.SUNDECK_DEBUG_MEMORY !== "1") return () => {};
  const onSignal = () => log.info("memory snapshot", { memory: memorySnapshot(sqlite) });
  process.on("SIGUSR2", onSignal);
  return () => process.off("SIGUSR2", onSignal);
}
