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

describe("idle collector with shrink", () => {
  /** Manual timers with a clock: `advance(ms)` moves the clock and runs the timers then due. */
  function clocked() {
    let t = 0;
    let pending: Array<{ fn: () => void; at: number; id: number }> = [];
    let next = 0;
    return {
      now: () => t,
      setTimer: (fn: () => void, ms: number) => {
        pending.push({ fn, at: t + ms, id: ++next });
        return next;
      },
      clearTimer: (id: unknown) => {
        pending = pending.filter((p) => p.id !== id);
      },
      advance(ms: number) {
        t += ms;
        const due = pending.filter((p) => p.at <= t);
        pending = pending.filter((p) => p.at > t);
        for (const p of due) p.fn();
      },
      get armed() {
        return pending.length;
      },
    };
  }

  it("shrinks at the end of the first burst, then collects only until the interval is up, then shrinks once", () => {
    const c0 = clocked();
    const log: string[] = [];
    const c = createIdleCollector({
      collect: () => log.push("gc"),
      shrink: { run: () => log.push("shrink"), everyMs: 60_000 },
      quietMs: 5000,
      ...c0,
    });
    c.poke();
    c0.advance(5000);
    expect(log).toEqual(["shrink"]);
    // a second burst 10 s later: a collection now, the shrink 60 s after the first
    c0.advance(5000);
    c.poke();
    c0.advance(5000);
    expect(log).toEqual(["shrink", "gc"]);
    c.poke();
    c0.advance(5000);
    expect(log).toEqual(["shrink", "gc", "gc"]);
    c0.advance(44_999);
    expect(log).toEqual(["shrink", "gc", "gc"]);
    c0.advance(1);
    expect(log).toEqual(["shrink", "gc", "gc", "shrink"]);
    expect(c.shrinks).toBe(2);
    expect(c.collections).toBe(4);
    expect(c0.armed).toBe(0);
  });

  it("a deferred shrink that comes due while work is in flight waits for the end of that work", () => {
    const c0 = clocked();
    const log: string[] = [];
    let busy = false;
    const c = createIdleCollector({
      collect: () => log.push("gc"),
      shrink: { run: () => log.push("shrink"), everyMs: 60_000 },
      idle: () => !busy,
      quietMs: 5000,
      ...c0,
    });
    c.poke();
    c0.advance(5000);
    c.poke();
    c0.advance(5000);
    expect(log).toEqual(["shrink", "gc"]);
    busy = true;
    c0.advance(60_000);
    expect(log).toEqual(["shrink", "gc"]);
    busy = false;
    c.poke();
    c0.advance(5000);
    expect(log).toEqual(["shrink", "gc", "shrink"]);
  });

  it("stop clears the deferred shrink", () => {
    const c0 = clocked();
    const log: string[] = [];
    const c = createIdleCollector({ collect: () => log.push("gc"), shrink: { run: () => log.push("shrink") }, ...c0 });
    c.poke();
    c0.advance(5000);
    c.poke();
    c0.advance(5000);
    expect(c0.armed).toBe(1);
    c.stop();
    expect(c0.armed).toBe(0);
  });
});
