/** Activity retention: pruned at start and nightly at 03:00 in batches; 0 keeps all; the API setting wins. */
import { describe, expect, it } from "bun:test";
import { createContext } from "../../../../src/context";
import { LogSink } from "../../../../src/log/logger";
import { msUntilHour } from "../../../../src/modules/activity/retention";
import { startServer } from "../../../../src/server";
import { FakeClock } from "../../../helpers/clock";
import { testConfig } from "../../../helpers/server";

const DAY = 86_400_000;
const actor = { userId: null, name: "system", source: "system" as const, ip: null };

function seeded(retention: number, clock: FakeClock) {
  const config = testConfig({ audit_retention_days: retention });
  const ctx = createContext(config, { clock, logs: new LogSink({ stdout: false }) });
  for (const age of [400, 366, 364, 10, 0]) {
    clock.set(Date.parse("2026-11-22T12:00:00Z") - age * DAY);
    ctx.activity.record({ actor, category: "system", action: "seeded", summary: `${age} days old` });
  }
  clock.set(Date.parse("2026-11-22T12:00:00Z"));
  return ctx;
}

const summaries = (ctx: ReturnType<typeof seeded>) =>
  ctx.db.sqlite
    .query<{ summary: string }, []>("SELECT summary FROM activity ORDER BY id")
    .all()
    .map((r) => r.summary);

describe("activity retention", () => {
  it("prunes entries older than the threshold when the server starts", async () => {
    const ctx = seeded(365, new FakeClock());
    const server = await startServer(ctx);
    try {
      expect(summaries(ctx)).toEqual(["364 days old", "10 days old", "0 days old"]);
    } finally {
      await server.stop();
    }
  });

  it("keeps everything with retention 0", async () => {
    const ctx = seeded(0, new FakeClock());
    const server = await startServer(ctx);
    try {
      expect(summaries(ctx)).toHaveLength(5);
    } finally {
      await server.stop();
    }
  });

  it("uses the retention stored through the API over the config file", async () => {
    const ctx = seeded(365, new FakeClock());
    ctx.settings.setAuditRetentionDays(5);
    const server = await startServer(ctx);
    try {
      expect(summaries(ctx)).toEqual(["0 days old"]);
    } finally {
      await server.stop();
    }
  });

  it("prunes in batches, leaving newer entries alone", () => {
    const clock = new FakeClock();
    const ctx = seeded(0, clock);
    clock.set(Date.parse("2020-01-01T00:00:00Z"));
    ctx.db.tx(() => {
      for (let i = 0; i < 25_000; i++) ctx.activity.record({ actor, category: "deploy", action: "old", summary: "old" });
    });
    clock.set(Date.parse("2026-11-22T12:00:00Z"));
    expect(ctx.activity.prune(30)).toBe(25_000 + 3);
    expect(summaries(ctx)).toEqual(["10 days old", "0 days old"]);
    ctx.db.close();
  });

  it("schedules the nightly run for the next 03:00", () => {
    const at = (h: number, m = 0) => {
      const d = new Date(2026, 10, 22, h, m);
      return d;
    };
    expect(msUntilHour(at(2, 30), 3)).toBe(30 * 60_000);
    expect(msUntilHour(at(3, 0), 3)).toBe(24 * 3_600_000);
    expect(msUntilHour(at(23, 0), 3)).toBe(4 * 3_600_000);
  });
});
