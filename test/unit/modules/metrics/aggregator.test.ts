/** The request stats aggregator counts per app and 10 s bucket within its caps; batches merge and summarise. */
import { describe, expect, it } from "bun:test";
import { mergeBatches, RequestStats, summarize } from "../../../../src/modules/metrics/aggregator";
import { denseHist, percentiles } from "../../../../src/modules/metrics/histogram";
import { FakeClock } from "../../../helpers/clock";

describe("request stats aggregator", () => {
  it("counts per app and 10 s bucket and hands finished buckets to drain", () => {
    const clock = new FakeClock(1_000_000_000_000);
    const stats = new RequestStats({ clock });
    for (let i = 0; i < 5; i++) stats.record("shop", { status: 200, ms: 5, path: `/users/${i}`, bytes: 100 });
    stats.record("shop", { status: 404, ms: 1, path: "/nope" });
    stats.record("shop", { status: 502, ms: 30, path: "/users/9" });
    stats.record("blog", { status: 301, ms: 2, path: "/" });
    expect(stats.drain()).toEqual([]); // the bucket is still filling
    clock.advance(10_000);
    const batches = stats.drain();
    expect(batches.map((b) => b.app).sort()).toEqual(["blog", "shop"]);
    const shop = batches.find((b) => b.app === "shop")!;
    expect(shop.start).toBe(1_000_000_000_000);
    expect(shop.durationMs).toBe(10_000);
    expect(shop.count).toBe(7);
    expect(shop.bytes).toBe(500);
    expect(shop.statuses).toEqual({ 200: 5, 404: 1, 502: 1 });
    expect(shop.classes).toEqual({ "1xx": 0, "2xx": 5, "3xx": 0, "4xx": 1, "5xx": 1 });
    expect(shop.paths).toEqual({ "/users/:id": 6, "/nope": 1 });
    const [p50] = percentiles(denseHist(shop.latency), [0.5]);
    expect(Math.abs(p50 - 5) / 5).toBeLessThan(0.05);
    expect(stats.drain()).toEqual([]);
    expect(stats.size).toBe(0); // idle apps are forgotten
  });

  it("starts a new bucket every 10 s and drains the current one with all", () => {
    const clock = new FakeClock(1_000_000_000_000);
    const stats = new RequestStats({ clock });
    stats.record("a", { status: 200, ms: 1, path: "/" });
    clock.advance(10_000);
    stats.record("a", { status: 200, ms: 1, path: "/" });
    stats.record("a", { status: 200, ms: 1, path: "/" });
    expect(stats.drain().map((b) => b.count)).toEqual([1]);
    expect(stats.drain({ all: true }).map((b) => b.count)).toEqual([2]);
  });

  it("bounds paths per bucket, apps and pending buckets", () => {
    const clock = new FakeClock(1_000_000_000_000);
    const stats = new RequestStats({ clock, maxPaths: 3, maxApps: 2, maxPending: 2 });
    for (const p of ["/a", "/b", "/c", "/d", "/e", "/a"]) stats.record("x", { status: 200, ms: 1, path: p });
    stats.record("y", { status: 200, ms: 1, path: "/" });
    stats.record("z", { status: 200, ms: 1, path: "/" }); // third app: dropped
    expect(stats.dropped).toBe(1);
    for (let i = 0; i < 4; i++) {
      clock.advance(10_000);
      stats.record("x", { status: 200, ms: 1, path: "/" });
    }
    const out = stats.drain();
    expect(out.length).toBeLessThanOrEqual(3);
    expect(stats.dropped).toBeGreaterThan(1);
    const first = mergeBatches(out.filter((b) => b.app === "x"))!;
    expect(first.count).toBeGreaterThan(0);
  });

  it("records without allocating per request beyond the path key", () => {
    const stats = new RequestStats();
    const sample = { status: 200, ms: 3, path: "/users/42" };
    for (let i = 0; i < 1000; i++) stats.record("a", sample);
    const t0 = performance.now();
    for (let i = 0; i < 200_000; i++) stats.record("a", sample);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});

describe("merging and summaries", () => {
  it("merges buckets and summarises a range", () => {
    const clock = new FakeClock(1_000_000_000_000);
    const stats = new RequestStats({ clock });
    for (let b = 0; b < 6; b++) {
      for (let i = 0; i < 100; i++) {
        stats.record("a", { status: i < 90 ? 200 : 500, ms: i < 50 ? 2 : i < 95 ? 20 : 200, path: i % 2 ? "/x/1" : "/y" });
      }
      clock.advance(10_000);
    }
    const batches = stats.drain();
    expect(batches.length).toBe(6);
    const merged = mergeBatches(batches)!;
    expect(merged.count).toBe(600);
    expect(merged.durationMs).toBe(60_000);
    const s = summarize(batches, 60_000);
    expect(s.requests).toBe(600);
    expect(s.rps).toBe(10);
    expect(s.classes["5xx"]).toBe(60);
    expect(s.statuses).toEqual({ 200: 540, 500: 60 });
    expect(Math.abs(s.p50 - 2) / 2).toBeLessThan(0.05);
    expect(Math.abs(s.p95 - 20) / 20).toBeLessThan(0.05);
    expect(Math.abs(s.p99 - 200) / 200).toBeLessThan(0.05);
    expect(s.topPaths).toEqual([
      { path: "/x/:id", count: 300 },
      { path: "/y", count: 300 },
    ]);
    expect(summarize([], 60_000).requests).toBe(0);
  });

  it("caps merged paths and counts the rest as other", () => {
    const base = {
      app: "a",
      durationMs: 10_000,
      count: 3,
      bytes: 0,
      statuses: {},
      classes: { "1xx": 0, "2xx": 3, "3xx": 0, "4xx": 0, "5xx": 0 },
      latency: {},
    };
    const m = mergeBatches(
      [
        { ...base, start: 0, paths: { "/a": 2, "/b": 1 } },
        { ...base, start: 10_000, paths: { "/a": 1, "/c": 1, other: 1 } },
      ],
      1,
    )!;
    expect(m.paths).toEqual({ "/a": 3, other: 3 });
  });
});
