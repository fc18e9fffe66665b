/** Attempts waiting on a replica are aborted when it leaves the route table, and only those. */
import { describe, expect, it } from "bun:test";
import { WaitingAttempts } from "../../../src/proxy/attempts";

describe("attempts waiting on replicas", () => {
  it("aborts the attempts of replicas that are no longer live, and only those", () => {
    const w = new WaitingAttempts();
    const a = new AbortController();
    const b = new AbortController();
    const c = new AbortController();
    w.add("10.0.0.1:80", a);
    w.add("10.0.0.1:80", b);
    w.add("10.0.0.2:80", c);
    w.delete("10.0.0.1:80", b);
    expect(w.abandon(new Set(["10.0.0.2:80"]))).toBe(1);
    expect(a.signal.aborted).toBe(true);
    expect(b.signal.aborted).toBe(false);
    expect(c.signal.aborted).toBe(false);
    expect(w.abandon(new Set())).toBe(1);
    expect(c.signal.aborted).toBe(true);
  });
});
