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
  it("answer the last hour from raw, a day from 1m, a week from 5m, and beyond from 1h", () => {
    expect(tierFor(tiers, H).name).toBe("raw");
    expect(tierFor(tiers, 24 * H).name).toBe("1m");
    expect(tierFor(tiers, 7 * 24 * H).name).toBe("5m");
    expect(tierFor(tiers, 30 * 24 * H).name).toBe("1h");
    expect(tierFor(tiers, 400 * 24 * H).name).toBe("1h");
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

  it("drops buckets past each tier's retention", () => {
    const { clock, store, agg, db } = setup();
    agg.record("blog", { status: 200, ms: 1, path: "/" });
    clock.advance(10_000);
    store.store(agg.drain());
    clock.advance(2 * 24 * H);
    store.prune();
    const left = db.sqlite
      .query<{ tier: string }, []>("SELECT tier FROM request_stats ORDER BY tier")
      .all()
      .map((r) => r.tier);
    expect(left).toEqual(["1h", "1m", "5m"]);
  });
});
