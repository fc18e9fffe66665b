/** After a burst of work, one collection runs once the process has been quiet and idle; never one per unit of work. */
import { describe, expect, it } from "bun:test";
import { createIdleCollector } from "../../../src/lib/idle-collect";

/** Timers run by hand: `fire()` runs what is due, in order. */
function manualTimers() {
  let pending: Array<{ fn: () => void; ms: number; id: number }> = [];
  let next = 0;
  return {
    setTimer: (fn: () => void, ms: number) => {
      pending.push({ fn, ms, id: ++next });
      return next;
    },
    clearTimer: (id: unknown) => {
      pending = pending.filter((t) => t.id !== id);
    },
    fire() {
      const due = pending;
      pending = [];
      for (const t of due) t.fn();
    },
    get armed() {
      return pending.map((t) => t.ms);
    },
  };
}

describe("idle collector", () => {
  it("collects once after a burst of pokes, after the quiet time", () => {
    const timers = manualTimers();
    let runs = 0;
    const c = createIdleCollector({ collect: () => runs++, quietMs: 5000, ...timers });
    for (let i = 0; i < 20; i++) c.poke();
    expect(timers.armed).toEqual([5000]);
    expect(runs).toBe(0);
    timers.fire();
    expect(runs).toBe(1);
    expect(c.collections).toBe(1);
    timers.fire();
    expect(runs).toBe(1);
  });

  it("skips the collection while work is in flight, and collects after the next poke once idle", () => {
    const timers = manualTimers();
    let runs = 0;
    let busy = true;
    const c = createIdleCollector({ collect: () => runs++, idle: () => !busy, ...timers });
    c.poke();
    timers.fire();
    expect(runs).toBe(0);
    busy = false;
    c.poke();
    timers.fire();
    expect(runs).toBe(1);
  });

  it("does nothing after stop", () => {
    const timers = manualTimers();
    let runs = 0;
    const c = createIdleCollector({ collect: () => runs++, ...timers });
    c.poke();
    c.stop();
    c.poke();
    timers.fire();
    expect(runs).toBe(0);
    expect(timers.armed).toEqual([]);
  });
});
