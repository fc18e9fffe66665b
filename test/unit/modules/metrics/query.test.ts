/**
 * Range queries on a real SQLite file with a fake clock: the spec's tier per range with every bucket of the range as
 * a point, missing samples as explicit null points (never zeros), the newest not yet rolled up bucket of a coarse
 * tier computed from raw rows, one series per container of the app only.
 */
import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { defaults } from "../../../../src/config/schema";
import { openDb } from "../../../../src/db";
import { LogSink } from "../../../../src/log/logger";
import { parseTiers } from "../../../../src/modules/metrics/request-stats";
import { createMetricsService } from "../../../../src/modules/metrics/service";
import { FakeClock } from "../../../helpers/clock";
import { tickAt } from "../../../helpers/metrics";
import { tempDir } from "../../../helpers/tmp";

const tiers = parseTiers(defaults().metrics.tiers);
const T0 = Date.parse("2026-11-22T12:00:00Z");
const S = 1000;
const H = 3_600_000;
const D = 24 * H;

function setup() {
  const clock = new FakeClock(T0);
  const db = openDb(join(tempDir(), "m.db"));
  const svc = createMetricsService({
    db,
    clock,
    log: new LogSink({ stdout: false }).logger("metrics"),
    tiers,
    collector: null,
    everyMs: 0,
  });
  /** Record a tick at the clock's time with blog's web replica at `cpu` (and `running`), the host at cpu/2. */
  const at = (cpu: number, running = true) =>
    svc.record(
      tickAt(clock.now(), {
        containers: [
          { containerId: "c1", app: "blog", cpuPct: cpu, memBytes: 100 * cpu, running },
          { containerId: "c2", app: "shop", cpuPct: 1 },
        ],
        host: { cpuPct: cpu / 2, memTotalBytes: 8e9 },
      }),
    );
  return { clock, db, svc, at };
}

describe("metrics queries", () => {
  it.each([
    ["30m", H / 2, "raw", 10, 180],
    ["1h", H, "raw", 10, 360],
    ["2h", 2 * H, "1m", 60, 120],
    ["24h", D, "1m", 60, 1440],
    ["25h", 25 * H, "5m", 300, 300],
    ["7d", 7 * D, "5m", 300, 2016],
    ["8d", 8 * D, "1h", 3600, 192],
    ["30d", 30 * D, "1h", 3600, 720],
    ["1y", 365 * D, "1h", 3600, 8760],
  ])("answer %s from the %s tier, every bucket a point", (_, range, tier, step, count) => {
    const { svc, clock } = setup();
    clock.advance(5 * S);
    for (const r of [svc.app("blog", range as number), svc.system(range as number)]) {
      expect(r.tier).toBe(tier as string);
      expect(r.step_seconds).toBe(step as number);
    }
    const sys = svc.system(range as number);
    expect(sys.points).toHaveLength(count as number);
    // the last point is the bucket holding now; `to` is its end
    expect(sys.points.at(-1)!.t).toBe(new Date(T0).toISOString());
    expect(sys.to).toBe(new Date(T0 + (step as number) * 1000).toISOString());
    expect(Date.parse(sys.to) - Date.parse(sys.from)).toBe((count as number) * (step as number) * 1000);
  });

  it("return a missing sample as a point whose values are all null, a stopped container too", () => {
    const { svc, clock, at } = setup();
    at(10);
    clock.advance(10 * S);
    at(20);
    // 12:00:20 and 12:00:30 missed; at 12:00:40 the container is stopped
    clock.advance(30 * S);
    at(30, false);
    clock.advance(10 * S);
    at(40);
    clock.advance(5 * S);
    const r = svc.app("blog", H);
    expect(r.containers).toHaveLength(1);
    const c = r.containers[0];
    expect(c).toMatchObject({ id: "c1", name: "blog-web-1", service: "web" });
    expect(c.points).toHaveLength(360);
    expect(c.points.slice(-6).map((p) => p.cpu_pct)).toEqual([10, 20, null, null, null, 40]);
    const gap = c.points.at(-2)!;
    expect(gap.t).toBe(new Date(T0 + 40 * S).toISOString());
    for (const [k, v] of Object.entries(gap)) if (k !== "t") expect(v).toBeNull();
    expect(c.points.at(-1)).toMatchObject({ cpu_pct: 40, cpu_pct_max: 40, mem_bytes: 4000, cpu_limit_pct: null, restarts: null });
    // nothing before the first tick: gaps, not zeros
    expect(c.points.slice(0, -6).every((p) => p.cpu_pct === null && p.mem_bytes === null)).toBe(true);
    const host = svc.system(H).points.slice(-6);
    expect(host.map((p) => p.cpu_pct)).toEqual([5, 10, null, null, 15, 20]);
    expect(svc.app("nothing-here", H).containers).toEqual([]);
  });

  it("answer the bucket a coarse tier has not rolled up yet from raw rows, so a day's chart ends at the last tick", async () => {
    const { svc, clock, at } = setup();
    for (let i = 0; i < 9; i++) {
      at(10 * i);
      clock.advance(10 * S);
    }
    // 12:01:30: the 12:00 minute closed (not rolled up: no pass ran), 12:01 is open
    const before = svc.app("blog", D).containers[0].points.slice(-2);
    expect(before.map((p) => [p.cpu_pct, p.cpu_pct_max])).toEqual([
      [25, 50],
      [70, 80],
    ]);
    await svc.maintain();
    const after = svc.app("blog", D).containers[0].points.slice(-2);
    expect(after).toEqual(before);
    const week = svc.system(7 * D).points.at(-1)!;
    expect(week).toMatchObject({ cpu_pct: 20, cpu_pct_max: 40, mem_total_bytes: 8e9 });
  });
});
