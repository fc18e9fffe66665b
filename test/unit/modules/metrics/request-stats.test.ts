/** The stats store merges batches into every metrics tier, answers a range from the right tier, prunes by retention. */
import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { defaults } from "../../../../src/config/schema";
import { openDb } from "../../../../src/db";
import { LogSink } from "../../../../src/log/logger";
import { RequestStats } from "../../../../src/modules/metrics/aggregator";
import { createRequestStatsStore, parseTiers, tierFor } from "../../../../src/modules/metrics/request-stats";
import { FakeClock } from "../../../helpers/clock";
import { tempDir } from "../../../helpers/tmp";

const tiers = parseTiers(defaults().metrics.tiers);
const H = 3_600_000;

describe("metrics tiers", () => {
  const D = 24 * H;
  it.each([
    ["30m", H / 2, "raw"],
    ["1h", H, "raw"],
    ["2h", 2 * H, "1m"],
    ["24h", 24 * H, "1m"],
    ["25h", 25 * H, "5m"],
    ["7d", 7 * D, "5m"],
    ["8d", 8 * D, "1h"],
    ["30d", 30 * D, "1h"],
    ["1y", 365 * D, "1h"],
    ["400d", 400 * D, "1h"],
  ])("answer %s from the %s tier (SPEC's table)", (_, range, tier) => {
    expect(tierFor(tiers, range as number).name).toBe(tier as string);
  });

  it("skip a custom tier that does not keep the range or would answer it with too many points", () => {
    const custom = parseTiers([
      { name: "fine", resolution: "100ms", retention: "30m" },
      { name: "mid", resolution: "1m", retention: "2h" },
      { name: "coarse", resolution: "1h", retention: "8760h" },
    ]);
    // 30m at 100 ms would be 18,000 points
    expect(tierFor(custom, 30 * 60_000).name).toBe("mid");
    expect(tierFor(custom, 60_000).name).toBe("fine");
    // 1m keeps only 2h
    expect(tierFor(custom, 3 * H).name).toBe("coarse");
  });
});

describe("request stats store", () => {
  const setup = () => {
    const clock = new FakeClock(Date.parse("2026-11-22T12:00:00Z"));
    const db = openDb(join(tempDir(), "s.db"));
    const store = createRequestStatsStore({ db, clock, log: new LogSink({ stdout: false }).logger("t"), tiers });
    const agg = new RequestStats({ clock });
    return { clock, db, store, agg };
  };

  it("stores batches in every tier and answers rate, percentiles, statuses and top paths", () => {
    const { clock, store, agg } = setup();
    // 2 minutes of traffic: 6 requests per 10 s bucket
    for (let s = 0; s < 120; s += 10) {
      for (let i = 0; i < 5; i++) agg.record("blog", { status: 200, ms: 10 + i, path: `/posts/${i + 1}` });
      agg.record("blog", { status: 503, ms: 200, path: "/health" });
      clock.advance(10_000);
      store.store(agg.drain());
    }
    const r = store.query("blog", H);
    expect(r.tier).toBe("raw");
    expect(r.requests).toBe(72);
    expect(r.rps).toBeCloseTo(72 / 3600, 3);
    expect(r.status_codes).toEqual({ "200": 60, "503": 12 });
    expect(r.status_classes["5xx"]).toBe(12);
    expect(r.top_paths[0]).toEqual({ path: "/posts/:id", count: 60 });
    expect(r.p50_ms).toBeGreaterThan(9);
    expect(r.p50_ms).toBeLessThan(16);
    expect(r.p99_ms).toBeGreaterThan(150);
    expect(r.series).toHaveLength(12);
    expect(r.series[0]).toMatchObject({ requests: 6, errors: 1 });
    const day = store.query("blog", 24 * H);
    expect(day.tier).toBe("1m");
    expect(day.requests).toBe(72);
    expect(day.series.length).toBeLessThanOrEqual(3);
    expect(store.query("other-app", H).requests).toBe(0);
  });

  it("drops buckets past each tier's retention", async () => {
    const { clock, store, agg, db } = setup();
    agg.record("blog", { status: 200, ms: 1, path: "/" });
    clock.advance(10_000);
    store.store(agg.drain());
    clock.advance(2 * 24 * H);
    expect(await store.prune()).toBe(1);
    const left = db.sqlite
      .query<{ tier: string }, []>("SELECT tier FROM request_stats ORDER BY tier")
      .all()
      .map((r) => r.tier);
    expect(left).toEqual(["1h", "1m", "5m"]);
  });

  it("deletes in chunks after a long outage, letting the event loop run between them", async () => {
    const { clock, store, db } = setup();
    const put = db.sqlite.prepare("INSERT INTO request_stats (app_slug, tier, bucket, data) VALUES (?, 'raw', ?, '{}')");
    const now = clock.now();
    // 12,000 raw buckets of 100 apps a day and more old, then 1,000 still kept
    db.tx(() => {
      for (let i = 0; i < 130; i++) {
        const bucket = i < 120 ? now - 2 * 24 * H + i * 10_000 : now - H + i * 10_000;
        for (let a = 0; a < 100; a++) put.run(`app-${a}`, bucket);
      }
    });
    const count = () => (db.sqlite.query("SELECT COUNT(*) AS n FROM request_stats").get() as { n: number }).n;
    const seen: number[] = [];
    const watch = () => {
      seen.push(count());
      if (seen.length < 50 && seen.at(-1)! > 1000) setImmediate(watch);
    };
    setImmediate(watch);
    // a second call while one runs joins it
    const [a, b] = await Promise.all([store.prune(5000), store.prune(5000)]);
    expect([a, b]).toEqual([12_000, 12_000]);
    expect(count()).toBe(1000);
    // seen between statements: 8,000 left after the first 5,000 and 3,000 after the next, never all at once
    expect(seen).toContain(13_000 - 5000);
    expect(seen).toContain(13_000 - 10_000);
  });
});
