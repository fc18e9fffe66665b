/**
 * Proves the background jobs are off the path to ready when `sundeck serve` asks for it: startServer returns with the
 * API answering before the jobs have run (here the retention prune, whose first pass is synchronous), and they run
 * shortly after; and recovery (deploys and backup runs a killed process left "running", the uploads sweep) is not one
 * of them: work a request starts right after ready is never taken for interrupted.
 */
import { describe, expect, it } from "bun:test";
import { createContext } from "../../src/context";
import { LogSink } from "../../src/log/logger";
import { startServer } from "../../src/server";
import { FakeClock } from "../helpers/clock";
import { until } from "../helpers/http";
import { testConfig } from "../helpers/server";

const DAY = 86_400_000;
const actor = { userId: null, name: "system", source: "system" as const, ip: null };

/** A context with one activity entry past its retention. */
function seeded() {
  const clock = new FakeClock();
  const ctx = createContext(testConfig({ audit_retention_days: 30 }), { clock, logs: new LogSink({ stdout: false }) });
  clock.set(Date.parse("2026-11-22T12:00:00Z") - 100 * DAY);
  ctx.activity.record({ actor, category: "system", action: "seeded", summary: "old" });
  clock.set(Date.parse("2026-11-22T12:00:00Z"));
  const entries = () => ctx.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM activity").get()!.n;
  return { ctx, entries };
}

describe("background jobs after ready", () => {
  it("start after the API has answered, not before startServer returns", async () => {
    const { ctx, entries } = seeded();
    const server = await startServer(ctx, { backgroundAfterMs: 200 });
    try {
      expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
      expect(entries()).toBe(1);
      await until(() => entries() === 0, { timeout: 5000, what: "the retention prune" });
    } finally {
      await server.stop();
    }
  });

  it("recovers interrupted work before the first request, so a deploy started right after ready is not interrupted", async () => {
    const { ctx, entries } = seeded();
    const server = await startServer(ctx, { backgroundAfterMs: 200 });
    try {
      // what a deploy request handled at once after ready records: a running deploy of an app
      const now = new Date().toISOString();
      const app = ctx.appRepo.create("fresh", now);
      // removed, so the reconciler's pass leaves it alone (it has no directory to deploy from)
      ctx.appRepo.update(app.id, { removedAt: now }, now);
      const dep = ctx.deployRepo.insertDeploy({ appId: app.id, versionId: null, action: "deploy", source: "api", now });
      await until(() => entries() === 0, { timeout: 5000, what: "the background jobs" });
      expect(ctx.deployRepo.deploy(dep.id)?.status).toBe("running");
    } finally {
      await server.stop();
    }
  });
});
