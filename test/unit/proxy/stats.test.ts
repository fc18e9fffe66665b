import { describe, expect, it } from "bun:test";
import { denseHist, HIST_BUCKETS, histIndex, newHist, percentiles } from "../../../src/proxy/histogram";
import { normalizePath } from "../../../src/proxy/paths";
import { mergeBatches, RequestStats, summarize } from "../../../src/proxy/stats";
import { FakeClock } from "../../helpers/clock";

describe("path normalisation", () => {
  const cases: Array<[string, string]> = [
    ["/", "/"],
    ["/users", "/users"],
    ["/users/123", "/users/:id"],
    ["/users/123/posts/45", "/users/:id/posts/:id"],
    ["/users/123/", "/users/:id/"],
    ["/orders/550e8400-e29b-41d4-a716-446655440000", "/orders/:id"],
    ["/orders/550E8400-E29B-41D4-A716-446655440000/items", "/orders/:id/items"],
    ["/commits/9fceb02d0ae598e95dc970b74767f19372d61af8", "/commits/:id"],
    ["/objects/507f1f77bcf86cd799439011", "/objects/:id"],
    ["/t/aB3dE5fG7hJ9kL1mN3pQ5rS7tU9", "/t/:id"],
    ["/blog/my-first-post", "/blog/my-first-post"],
    ["/api/v2/items", "/api/v2/items"],
    ["/cafe", "/cafe"],
    ["/static/app.3f2a.js", "/static/app.3f2a.js"],
  ];
  for (const [raw, want] of cases) it(`turns ${raw} into ${want}`, () => expect(normalizePath(raw)).toBe(want));

  it("returns a path with nothing to replace unchanged and cuts long ones", () => {
    const p = "/a/b/c";
    expect(normalizePath(p)).toBe(p);
    expect(normalizePath(`/${"x".repeat(500)}`).length).toBe(160);
  });
});

describe("latency histogram", () => {
  it("reads p50/p95/p99 within 5% of the exact values", () => {
    // a log-normal-ish spread from 0.2 ms to 20 s
    const samples: number[] = [];
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 100_000; i++) samples.push(0.2 * Math.exp(rand() * Math.log(100_000)));
    const h = newHist();
    for (const s of samples) h[histIndex(s)]++;
    samples.sort((a, b) => a - b);
    const exact = [0.5, 0.95, 0.99].map((q) => samples[Math.ceil(q * samples.length) - 1]);
    const got = percentiles(h);
    for (let i = 0; i < 3; i++) expect(Math.abs(got[i] - exact[i]) / exact[i]).toBeLessThan(0.05);
  });

  it("is exact enough at the edges and empty", () => {
    const h = newHist();
    expect(percentiles(h)).toEqual([0, 0, 0]);
    h[histIndex(0.01)]++;
    expect(percentiles(h, [0.5])[0]).toBe(0.1);
    h[histIndex(120_000)] += 10;
    expect(percentiles(h, [0.99])[0]).toBe(60_000);
    for (const ms of [0.1, 1, 12.3, 250, 999, 59_000]) {
      const one = newHist();
      one[histIndex(ms)]++;
      expect(Math.abs(percentiles(one, [0.5])[0] - ms) / ms).toBeLessThan(0.05);
    }
    expect(HIST_BUCKETS).toBeLessThan(200);
  });
});

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
