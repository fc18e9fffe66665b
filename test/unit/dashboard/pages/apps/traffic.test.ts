/** The Traffic tab's arithmetic (pages/apps/traffic.ts): ranges, bucket width, filling empty buckets, breakdowns. */
import { describe, expect, test } from "bun:test";
import { bucketMs, errorRate, fillSeries, parseRange, statusBars } from "../../../../../src/dashboard/pages/apps/traffic";
import type { RequestStats } from "../../../../../src/shared/metrics";

const NOW = Date.parse("2026-05-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

const stats = (over: Partial<RequestStats>): RequestStats => ({
  range: "1h",
  tier: "raw",
  step_ms: 10_000,
  from: iso(NOW - 3_600_000),
  to: iso(NOW),
  requests: 0,
  rps: 0,
  p50_ms: 0,
  p95_ms: 0,
  p99_ms: 0,
  bytes: 0,
  status_codes: {},
  status_classes: {},
  top_paths: [],
  series: [],
  ...over,
});

const point = (t: number, requests: number) => ({
  t: iso(t),
  requests,
  rps: requests / 10,
  p50_ms: 1,
  p95_ms: 2,
  p99_ms: 3,
  errors: 0,
});

describe("traffic", () => {
  test("ranges default to 1h", () => {
    expect(parseRange("7d")).toBe("7d");
    expect(parseRange("2h")).toBe("1h");
    expect(parseRange(null)).toBe("1h");
  });

  test("bucket width: the server's step_ms; without it the tier's name, else the smallest gap, else 10 s", () => {
    expect(bucketMs(stats({ tier: "raw", step_ms: 15_000 }))).toBe(15_000);
    expect(bucketMs(stats({ tier: "5m", step_ms: 60_000 }))).toBe(60_000);
    // an answer without step_ms
    const bare = (over: Partial<Pick<RequestStats, "tier" | "series">>) => ({ tier: "raw", series: [], ...over });
    expect(bucketMs(bare({ tier: "5m" }))).toBe(300_000);
    const from = NOW - 3_600_000;
    expect(bucketMs(bare({ series: [point(from, 1), point(from + 30_000, 1), point(from + 50_000, 1)] }))).toBe(20_000);
    expect(bucketMs(bare({ series: [point(from, 1)] }))).toBe(10_000);
  });

  test("fills empty buckets: zero requests per second, no latency", () => {
    const from = NOW - 3_600_000;
    const f = fillSeries(stats({ series: [point(from + 20_000, 5)] }));
    expect(f.t.length).toBe(360);
    expect(f.rps.slice(0, 4)).toEqual([0, 0, 0.5, 0]);
    expect(f.p95.slice(0, 4)).toEqual([null, null, 2, null]);
  });

  test("error rate counts 5xx; the breakdown always lists 2xx to 5xx", () => {
    const s = stats({ requests: 10, status_classes: { "2xx": 7, "4xx": 2, "5xx": 1 } });
    expect(errorRate(s)).toBeCloseTo(0.1);
    expect(statusBars(s)).toEqual([
      { cls: "2xx", count: 7, share: 0.7 },
      { cls: "3xx", count: 0, share: 0 },
      { cls: "4xx", count: 2, share: 0.2 },
      { cls: "5xx", count: 1, share: 0.1 },
    ]);
    expect(errorRate(stats({}))).toBe(0);
    // a class with no answers is left out unless it is one of 2xx to 5xx
    expect(statusBars(stats({ requests: 1, status_classes: { "1xx": 0, "2xx": 1 } })).map((b) => b.cls)).toEqual([
      "2xx",
      "3xx",
      "4xx",
      "5xx",
    ]);
  });
});
