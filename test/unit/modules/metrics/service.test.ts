/**
 * The metrics service on a real SQLite file with a fake clock and a scripted collector: raw rows per tick, each
 * coarser bucket written once when it has closed (also across a restart in the middle of a bucket, and after an
 * outage), averages weighted by samples, maxima of maxima, the last restart count and limit; listeners and a failing
 * collector.
 */
import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { defaults } from "../../../../src/config/schema";
import { type Db, openDb } from "../../../../src/db";
import { LogSink } from "../../../../src/log/logger";
import { parseTiers } from "../../../../src/modules/metrics/request-stats";
import { createMetricsService } from "../../../../src/modules/metrics/service";
import { FakeClock } from "../../../helpers/clock";
import { ScriptedCollector, type TickScript } from "../../../helpers/metrics";
import { tempDir } from "../../../helpers/tmp";

const tiers = parseTiers(defaults().metrics.tiers);
const T0 = Date.parse("2026-11-22T12:00:00Z");
const S = 1000;
const M = 60 * S;

/** Tick n: one container with cpu 10n, memory 1000+n of a limit 5000+n, n restarts; the host at cpu n. */
const script: TickScript = (_, n) => ({
  containers: [{ containerId: "c1", app: "blog", cpuPct: 10 * n, memBytes: 1000 + n, memLimitBytes: 5000 + n, restarts: n }],
  host: { cpuPct: n, memTotalBytes: 8000 + n },
});

function setup() {
  const clock = new FakeClock(T0);
  const path = join(tempDir(), "m.db");
  const logs = new LogSink({ stdout: false });
  const collector = new ScriptedCollector(clock, script);
  const build = (db: Db) =>
    createMetricsService({ db, clock, log: logs.logger("metrics"), tiers, collector, everyMs: 0, pruneEveryMs: 60 * M });
  return { clock, path, logs, collector, build };
}

/** Tick, then move the clock 10 s, until the clock reaches `until`. */
async function tickUntil(svc: ReturnType<ReturnType<typeof setup>["build"]>, clock: FakeClock, until: number) {
  while (clock.now() < until) {
    await svc.tick();
    clock.advance(10 * S);
  }
}

function rows(db: Db, table: string, tier: string): Array<Record<string, any>> {
  return db.sqlite.query(`SELECT * FROM ${table} WHERE tier = ? ORDER BY bucket`).all(tier) as Array<Record<string, any>>;
}

/** Mean of 10n for n in [a, b]. */
const meanCpu = (a: number, b: number) => (10 * (a + b)) / 2;

describe("metrics service rollups", () => {
  it("writes each bucket once across a restart in the middle of it: counts, averages, maxima and last values exact", async () => {
    const { clock, path, build } = setup();
    let db = openDb(path);
    const a = build(db);
    await a.start();
    // 12:00:00 .. 12:00:30, then the process stops in the middle of the 12:00 minute
    await tickUntil(a, clock, T0 + 40 * S);
    await a.stop();
    db.close();

    db = openDb(path);
    const b = build(db);
    await b.start();
    await tickUntil(b, clock, T0 + 6 * M);
    await b.maintain();

    expect(rows(db, "container_metrics", "raw")).toHaveLength(36);
    const minutes = rows(db, "container_metrics", "1m");
    expect(minutes.map((r) => r.bucket)).toEqual([0, 1, 2, 3, 4, 5].map((m) => T0 + m * M));
    minutes.forEach((r, m) => {
      expect(r).toMatchObject({
        samples: 6,
        cpu_pct: meanCpu(6 * m, 6 * m + 5),
        cpu_pct_max: 10 * (6 * m + 5),
        mem_bytes_max: 1000 + 6 * m + 5,
        restarts: 6 * m + 5,
        mem_limit_bytes: 5000 + 6 * m + 5,
        app_slug: "blog",
        service: "web",
      });
    });
    const fives = rows(db, "container_metrics", "5m");
    expect(fives).toHaveLength(1);
    expect(fives[0]).toMatchObject({ bucket: T0, samples: 30, cpu_pct: meanCpu(0, 29), cpu_pct_max: 290, restarts: 29 });
    expect(rows(db, "container_metrics", "1h")).toHaveLength(0);
    const hostMinutes = rows(db, "host_metrics", "1m");
    expect(hostMinutes.map((r) => [r.samples, r.cpu_pct, r.cpu_pct_max, r.mem_total_bytes])).toEqual(
      [0, 1, 2, 3, 4, 5].map((m) => [6, 6 * m + 2.5, 6 * m + 5, 8000 + 6 * m + 5]),
    );
    await b.stop();
    db.close();
  });

  it("rolls up after an outage the buckets that closed while it was off, once, however often it restarts", async () => {
    const { clock, path, build } = setup();
    let db = openDb(path);
    const a = build(db);
    await a.start();
    await tickUntil(a, clock, T0 + M);
    await a.stop();
    db.close();
    // off from 12:01:00 to 13:10:00: the 12:00 minute, the 12:00 five minutes and the 12:00 hour closed meanwhile
    clock.set(T0 + 70 * M);
    for (let restart = 0; restart < 3; restart++) {
      db = openDb(path);
      const b = build(db);
      await b.start();
      await b.stop();
      db.close();
    }
    db = openDb(path);
    for (const tier of ["1m", "5m", "1h"]) {
      const r = rows(db, "container_metrics", tier);
      expect(r).toHaveLength(1);
      expect(r[0]).toMatchObject({ bucket: T0, samples: 6, cpu_pct: meanCpu(0, 5), restarts: 5 });
      expect(rows(db, "host_metrics", tier)).toHaveLength(1);
    }
    db.close();
  });

  it("keeps every sample of two hours in the 1m, 5m and 1h tiers", async () => {
    const { clock, path, build } = setup();
    const db = openDb(path);
    const svc = build(db);
    await svc.start();
    await tickUntil(svc, clock, T0 + 120 * M);
    await svc.maintain();
    const hours = rows(db, "container_metrics", "1h");
    expect(hours.map((r) => [r.bucket, r.samples, r.cpu_pct, r.cpu_pct_max, r.restarts])).toEqual([
      [T0, 360, meanCpu(0, 359), 3590, 359],
      [T0 + 60 * M, 360, meanCpu(360, 719), 7190, 719],
    ]);
    expect(rows(db, "container_metrics", "5m")).toHaveLength(24);
    expect(rows(db, "container_metrics", "1m")).toHaveLength(120);
    expect(rows(db, "host_metrics", "1h").map((r) => r.samples)).toEqual([360, 360]);
    await svc.stop();
    db.close();
  });

  it("merges two samples landing in one raw bucket, weighting the average", async () => {
    const { clock, path, build } = setup();
    const db = openDb(path);
    const svc = build(db);
    await svc.tick();
    clock.advance(5 * S);
    await svc.tick();
    const raw = rows(db, "container_metrics", "raw");
    expect(raw).toHaveLength(1);
    expect(raw[0]).toMatchObject({ samples: 2, cpu_pct: 5, cpu_pct_max: 10, restarts: 1, mem_bytes: 1001 });
    db.close();
  });
});

describe("metrics service", () => {
  it("tells listeners each stored tick, keeps the latest, and survives a failing collector", async () => {
    const { clock, path, build, collector, logs } = setup();
    const db = openDb(path);
    const svc = build(db);
    const seen: number[] = [];
    const off = svc.onTick((t) => {
      // stored before the listeners run
      seen.push(svc.containerSamples(t.t).length);
    });
    expect(svc.latest()).toBeNull();
    await svc.tick();
    clock.advance(10 * S);
    collector.fail = new Error("engine gone");
    expect(await svc.tick()).toBeNull();
    clock.advance(10 * S);
    await svc.tick();
    off();
    clock.advance(10 * S);
    await svc.tick();
    expect(seen).toEqual([1, 1]);
    expect(svc.latest()?.t).toBe(T0 + 30 * S);
    expect(logs.snapshot().some((l) => l.includes("metrics collection failed") && l.includes("engine gone"))).toBe(true);
    // the failed tick is a missing raw row, nothing else
    expect(svc.containerSamples(T0).map((s) => s.t)).toEqual([T0, T0 + 20 * S, T0 + 30 * S]);
    expect(svc.containerSamples(T0, "other")).toEqual([]);
    expect(svc.containerSamples(T0 + 20 * S, "blog")[0]).toMatchObject({
      containerId: "c1",
      name: "blog-web-1",
      app: "blog",
      service: "web",
      running: true,
      cpuPct: 20,
      memLimitBytes: 5002,
    });
    expect(svc.hostSamples(T0 + 25 * S).map((h) => h.cpuPct)).toEqual([3]);
    db.close();
  });

  it("runs one pass at a time: a tick asked for while one runs is skipped", async () => {
    const { path, build, collector } = setup();
    const db = openDb(path);
    const svc = build(db);
    const first = svc.tick();
    expect(await svc.tick()).toBeNull();
    expect((await first)?.t).toBe(T0);
    expect(collector.calls).toBe(1);
    db.close();
  });
});

describe("container names", () => {
  it("names a container by what was stored, after a restart and once it is gone; forgets it with its metrics", async () => {
    const { clock, path, build } = setup();
    let db = openDb(path);
    const a = build(db);
    await tickUntil(a, clock, T0 + 30 * S);
    a.stop();
    db.close();
    // a new process never saw the container run: the name comes from the database, not from memory
    db = openDb(path);
    const b = build(db);
    expect(b.app("blog", 3_600_000).containers.map((c) => c.name)).toEqual(["blog-web-1"]);
    expect(b.containerSamples(T0, "blog").map((s) => s.name)).toEqual(["blog-web-1", "blog-web-1", "blog-web-1"]);
    b.stop();
    // past the longest retention (a year) the name goes with the rows, once the container no longer runs
    clock.advance(8761 * 3_600_000);
    const gone = createMetricsService({
      db,
      clock,
      log: new LogSink({ stdout: false }).logger("metrics"),
      tiers,
      collector: new ScriptedCollector(clock, () => ({ host: { cpuPct: 1 } })),
      everyMs: 0,
    });
    await gone.tick();
    expect(db.sqlite.query("SELECT * FROM metric_containers").all()).toEqual([]);
    expect(db.sqlite.query("SELECT * FROM container_metrics").all()).toEqual([]);
    gone.stop();
    db.close();
  });
});
