/**
 * An attacker's try at the metrics routes: a viewer asking for the longest range of an app whose containers were
 * replaced many times (scaled up and down, redeployed). Every container seen in the range used to get every bucket of
 * it as a point, so 2,000 replaced containers over 400 days were 19 million points and the server ran out of memory.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { defaults } from "../../../../src/config/schema";
import { openDb } from "../../../../src/db";
import { LogSink } from "../../../../src/log/logger";
import { MAX_ANSWER_POINTS } from "../../../../src/modules/metrics/query";
import { parseTiers } from "../../../../src/modules/metrics/request-stats";
import { createMetricsService } from "../../../../src/modules/metrics/service";
import { FakeClock } from "../../../helpers/clock";
import type { Client } from "../../../helpers/http";
import { tickAt } from "../../../helpers/metrics";
import { startTestServer, type TestServer } from "../../../helpers/server";
import { tempDir } from "../../../helpers/tmp";

const D = 86_400_000;
const tiers = parseTiers(defaults().metrics.tiers);

/** A metrics service that saw `rounds` ticks of `perRound` containers of blog, each round a fresh set of ids. */
function churned(rounds: number, perRound: number) {
  const clock = new FakeClock(Date.parse("2026-11-22T12:00:00Z"));
  const db = openDb(join(tempDir(), "m.db"));
  const svc = createMetricsService({
    db,
    clock,
    log: new LogSink({ stdout: false }).logger("metrics"),
    tiers,
    collector: null,
    everyMs: 0,
  });
  // a long-lived container next to the churn: it keeps every bucket while it lives
  for (let r = 0; r < rounds; r++) {
    const fresh = Array.from({ length: perRound }, (_, i) => ({ containerId: `r${r}-${i}`, app: "blog", cpuPct: r }));
    svc.record(tickAt(clock.now(), { containers: [{ containerId: "db", app: "blog", cpuPct: 1 }, ...fresh], host: {} }));
    clock.advance(10_000);
  }
  return svc;
}

const pointsOf = (m: { containers: Array<{ points: unknown[] }> }) => m.containers.reduce((n, c) => n + c.points.length, 0);

describe("an app whose containers were replaced many times", () => {
  it("answers a month with points across each container's rows, not every bucket for every one of them", () => {
    const svc = churned(30, 10);
    const m = svc.app("blog", 30 * D);
    expect(m.containers).toHaveLength(301);
    // 301 series × 720 buckets would be 216,720 points
    expect(pointsOf(m)).toBeLessThanOrEqual(MAX_ANSWER_POINTS);
    expect(pointsOf(m)).toBeLessThan(1_000);
    // nothing is lost: each replaced container still shows its value, the long-lived one its own
    const r7 = m.containers.find((c) => c.id === "r7-3")!;
    expect(r7.points.map((p) => p.cpu_pct)).toEqual([7]);
    expect(m.containers.find((c) => c.id === "db")!.points.map((p) => p.cpu_pct)).toEqual([1]);
  });

  it("keeps every bucket of the range for every container while the answer is small", () => {
    const svc = churned(3, 2);
    const m = svc.app("blog", 30 * D);
    expect(m.containers).toHaveLength(7);
    expect(m.containers.every((c) => c.points.length === 720)).toBe(true);
  });
});

describe("over HTTP", () => {
  let s: TestServer;
  let viewer: Client;
  beforeAll(async () => {
    s = await startTestServer();
    s.ctx.appRepo.create("blog", new Date().toISOString());
    viewer = await s.user("vic", "viewer", ["blog"]);
    // 2,000 containers, 100 at a time, within the last minutes
    const now = Date.now() - 60_000;
    for (let r = 0; r < 20; r++) {
      const fresh = Array.from({ length: 100 }, (_, i) => ({ containerId: `r${r}-${i}`, app: "blog", cpuPct: 5 }));
      s.ctx.metrics.record(tickAt(now - (20 - r) * 10_000, { containers: fresh, host: {} }));
    }
  });
  afterAll(() => s.stop());

  it("answers a viewer's 400 days of 2,000 replaced containers within the point budget", async () => {
    const r = await viewer.get("/api/apps/blog/metrics?range=400d");
    expect(r.status).toBe(200);
    expect(r.json.tier).toBe("1h");
    expect(r.json.containers).toHaveLength(2_000);
    expect(pointsOf(r.json)).toBeLessThanOrEqual(MAX_ANSWER_POINTS);
  });
});
