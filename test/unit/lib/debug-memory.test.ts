import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { installMemoryDump, memorySnapshot, startTrace } from "../../../src/lib/debug-memory";

describe("debug-memory (issue 16 benchmark hooks)", () => {
  test("start trace records nothing unless SUNDECK_DEBUG_START=1", () => {
    const off = startTrace({});
    off.mark("a");
    expect(off.done()).toEqual({});
    const on = startTrace({ SUNDECK_DEBUG_START: "1" });
    on.mark("a");
    expect(on.done().a).toBeGreaterThan(0);
  });

  test("the SIGUSR2 dump is installed only with SUNDECK_DEBUG_MEMORY=1", () => {
    const db = new Database(":memory:");
    const before = process.listenerCount("SIGUSR2");
    const lines: Array<Record<string, unknown> | undefined> = [];
    const log = { info: (_m: string, f?: Record<string, unknown>) => lines.push(f) };
    installMemoryDump(log, db, {})();
    expect(process.listenerCount("SIGUSR2")).toBe(before);
    const remove = installMemoryDump(log, db, { SUNDECK_DEBUG_MEMORY: "1" });
    expect(process.listenerCount("SIGUSR2")).toBe(before + 1);
    remove();
    expect(process.listenerCount("SIGUSR2")).toBe(before);
    db.close();
  });

  test("a snapshot has the heap figures and SQLite's cache setting", () => {
    const db = new Database(":memory:");
    const s = memorySnapshot(db);
    expect(s.heap_size).toBeGreaterThan(0);
    expect(s.object_count).toBeGreaterThan(0);
    expect(Object.keys(s.top_types).length).toBeGreaterThan(0);
    expect(s.sqlite_cache_size).toBe(-2000);
    db.close();
  });
});
