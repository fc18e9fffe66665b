/**
 * Pruning on a real SQLite file: each tier loses exactly the rows whose bucket starts before now minus its
 * retention, in DELETEs of at most the chunk size with the event loop running between them. Custom tiers the rollup
 * cannot keep exact (a name twice, a resolution that is not a multiple of the next finer one) are refused at load.
 */
import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { ConfigError, defaults, validateConfig } from "../../../../src/config/schema";
import { openDb } from "../../../../src/db";
import { LogSink } from "../../../../src/log/logger";
import { parseTiers } from "../../../../src/modules/metrics/request-stats";
import { createRollup } from "../../../../src/modules/metrics/rollup";
import { tempDir } from "../../../helpers/tmp";

const tiers = parseTiers(defaults().metrics.tiers);
const NOW = Date.parse("2026-11-22T12:00:00Z");
const S = 1000;
const H = 3_600_000;
const D = 24 * H;

function setup() {
  const db = openDb(join(tempDir(), "m.db"));
  const rollup = createRollup({ db, tiers, log: new LogSink({ stdout: false }).logger("metrics") });
  const put = db.sqlite.prepare(
    "INSERT INTO container_metrics (tier, bucket, container_id, app_slug, service, samples) VALUES (?, ?, ?, 'blog', 'web', 1)",
  );
  const putHost = db.sqlite.prepare("INSERT INTO host_metrics (tier, bucket, samples) VALUES (?, ?, 1)");
  const count = (table: string, tier: string) =>
    (db.sqlite.query(`SELECT COUNT(*) AS n FROM ${table} WHERE tier = ?`).get(tier) as { n: number }).n;
  const buckets = (table: string, tier: string) =>
    (
      db.sqlite.query(`SELECT DISTINCT bucket FROM ${table} WHERE tier = ? ORDER BY bucket`).all(tier) as Array<{
        bucket: number;
      }>
    ).map((r) => r.bucket);
  return { db, rollup, put, putHost, count, buckets };
}

describe("metrics pruning", () => {
  it("removes exactly the rows past each tier's retention", async () => {
    const { rollup, put, putHost, buckets } = setup();
    const cases: Array<[string, number, number]> = [
      ["raw", D, 10 * S],
      ["1m", 7 * D, 60 * S],
      ["5m", 30 * D, 300 * S],
      ["1h", 365 * D, H],
    ];
    for (const [tier, keep, step] of cases) {
      // the last bucket past retention, the first one kept, and one recent
      for (const b of [NOW - keep - step, NOW - keep, NOW - step]) {
        put.run(tier, b, "c1");
        putHost.run(tier, b);
      }
    }
    const r = await rollup.prune(NOW);
    expect(r.rows).toBe(8);
    for (const [tier, keep, step] of cases) {
      expect(buckets("container_metrics", tier)).toEqual([NOW - keep, NOW - step]);
      expect(buckets("host_metrics", tier)).toEqual([NOW - keep, NOW - step]);
    }
  });

  it("deletes in chunks, letting the event loop run between them", async () => {
    const { db, rollup, put, count } = setup();
    db.tx(() => {
      // 120 old raw buckets of 100 containers: 12,000 rows past retention, then 10 buckets still kept
      for (let i = 0; i < 130; i++) {
        const bucket = i < 120 ? NOW - 2 * D + i * 10 * S : NOW - H + i * 10 * S;
        for (let c = 0; c < 100; c++) put.run("raw", bucket, `c${c}`);
      }
    });
    const seen: number[] = [];
    const watch = () => {
      seen.push(count("container_metrics", "raw"));
      if (seen.length < 50 && seen.at(-1)! > 1000) setImmediate(watch);
    };
    setImmediate(watch);
    const r = await rollup.prune(NOW, 5000);
    expect(r.rows).toBe(12_000);
    expect(count("container_metrics", "raw")).toBe(1000);
    // seen between statements: 7,000 (after the first 5,000 of 12,000) and 2,000, never more at once
    expect(seen).toContain(13_000 - 5000);
    expect(seen).toContain(13_000 - 10_000);
    // raw containers: 5,000 + 5,000 + 2,000; every other tier and table: one statement finding nothing
    expect(r.statements).toBe(3 + 3 + 4);
  });
});

describe("custom tiers", () => {
  /** The config's error key for these tiers, or null when they are accepted. */
  const problem = (tiers: Array<[name: string, resolution: string, retention: string]>) => {
    const c = defaults();
    c.master_secret = "0123456789abcdef0123456789abcdef";
    c.tls.email = "ops@example.com";
    c.metrics.tiers = tiers.map(([name, resolution, retention]) => ({ name, resolution, retention }));
    try {
      validateConfig(c);
      return null;
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      return e.message;
    }
  };

  it("accepts tiers whose resolutions each divide the next coarser one, in any order", () => {
    expect(problem([["raw", "10s", "24h"]])).toBeNull();
    expect(
      problem([
        ["fine", "30s", "2d"],
        ["hour", "1h", "8760h"],
        ["raw", "10s", "6h"],
      ]),
    ).toBeNull();
  });

  it("refuses a resolution the next finer one does not divide: its buckets would straddle two coarse ones", () => {
    expect(
      problem([
        ["raw", "10s", "24h"],
        ["odd", "25s", "7d"],
      ]),
    ).toBe("config: metrics.tiers.1.resolution: must be a multiple of the next finer tier's resolution (10s)");
    expect(
      problem([
        ["raw", "10s", "24h"],
        ["1m", "1m", "7d"],
        ["7m", "7m", "30d"],
        ["1h", "1h", "8760h"],
      ]),
    ).toBe("config: metrics.tiers.3.resolution: must be a multiple of the next finer tier's resolution (7m)");
  });

  it("refuses a tier name given twice: the tiers share the tables, keyed by name", () => {
    expect(
      problem([
        ["raw", "10s", "24h"],
        ["raw", "1m", "7d"],
      ]),
    ).toBe('config: metrics.tiers.1.name: "raw" is the name of another tier');
  });
});
