/** The log ring and its time keys: Docker's trimmed nanosecond times sort right, bounds hold, tail/since from the ring. */
import { describe, expect, it } from "bun:test";
import { fromRing, hubLine, keySeconds, LineRing, tsKey, unixKey } from "../../../../src/modules/logs/ring";

const line = (ts: string | null, text = "x") => hubLine({ ts, stream: "stdout", line: text });

describe("time keys", () => {
  it("sort Docker's RFC 3339 times with trimmed fractions by time, not by text", () => {
    const a = "2026-11-27T00:00:01.1Z";
    const b = "2026-11-27T00:00:01.123Z";
    expect(a > b).toBe(true); // the raw strings sort the wrong way
    expect(tsKey(a) < tsKey(b)).toBe(true);
    expect(tsKey("2026-11-27T00:00:01Z")).toBe("2026-11-27T00:00:01.000000000Z");
    expect(tsKey(null)).toBe("");
  });

  it("turn unix seconds into keys and back, to the millisecond", () => {
    const k = unixKey(1_795_000_000.25);
    expect(k).toBe("2026-11-18T11:06:40.250000000Z");
    expect(keySeconds(k)).toBe(1_795_000_000.25);
  });
});

describe("frames", () => {
  it("carry ts only when the line has one, encoded once", () => {
    expect(JSON.parse(line("2026-11-27T00:00:01.5Z", "hello").json)).toEqual({
      ts: "2026-11-27T00:00:01.5Z",
      stream: "stdout",
      line: "hello",
    });
    expect(line(null, "no time here").json).toBe('{"stream":"stdout","line":"no time here"}');
  });
});

describe("LineRing", () => {
  it("keeps the newest lines within its count and byte bounds", () => {
    const r = new LineRing(3, 1_000_000);
    for (let i = 0; i < 5; i++) r.push(line(`2026-11-27T00:00:0${i}Z`, `l${i}`));
    expect(r.lines().map((l) => l.line)).toEqual(["l2", "l3", "l4"]);
    expect(r.evicted).toBe(2);
    const small = new LineRing(100, 200);
    for (let i = 0; i < 50; i++) small.push(line(null, `line ${i}`));
    expect(small.lines().reduce((n, l) => n + l.json.length, 0)).toBeLessThanOrEqual(200);
    expect(small.lines().at(-1)!.line).toBe("line 49");
  });

  it("stays ordered across its compactions", () => {
    const r = new LineRing(10, 1_000_000);
    for (let i = 0; i < 5000; i++) r.push(line(null, String(i)));
    expect(r.lines().map((l) => l.line)).toEqual([
      "4990",
      "4991",
      "4992",
      "4993",
      "4994",
      "4995",
      "4996",
      "4997",
      "4998",
      "4999",
    ]);
  });
});

describe("a cleared ring", () => {
  it("holds nothing, then fills again within its bounds", () => {
    const r = new LineRing(3, 1_000_000);
    for (let i = 0; i < 5; i++) r.push(line(null, String(i)));
    r.clear();
    expect(r.size).toBe(0);
    expect(r.lines()).toEqual([]);
    for (let i = 0; i < 4; i++) r.push(line(null, `again ${i}`));
    expect(r.lines().map((l) => l.line)).toEqual(["again 1", "again 2", "again 3"]);
  });
});

describe("history from the ring", () => {
  const lines = [1, 2, 3, 4, 5].map((s) => line(`2026-11-27T00:00:0${s}Z`, `l${s}`));
  it("serves a tail it holds, and the whole log when it is complete", () => {
    expect(fromRing(lines, false, 2, "")!.map((l) => l.line)).toEqual(["l4", "l5"]);
    expect(fromRing(lines, true, 100, "")!.map((l) => l.line)).toEqual(["l1", "l2", "l3", "l4", "l5"]);
    expect(fromRing(lines, false, 0, "")).toEqual([]);
  });

  it("serves a since it covers (it holds an older line), and no more than the tail", () => {
    const since = tsKey("2026-11-27T00:00:03Z");
    expect(fromRing(lines, false, 100, since)!.map((l) => l.line)).toEqual(["l3", "l4", "l5"]);
    expect(fromRing(lines, false, 1, since)!.map((l) => l.line)).toEqual(["l5"]);
  });

  it("says it cannot when older lines may exist that it does not hold", () => {
    expect(fromRing(lines, false, 6, "")).toBeNull();
    expect(fromRing(lines, false, 100, tsKey("2026-11-27T00:00:00Z"))).toBeNull();
  });
});
