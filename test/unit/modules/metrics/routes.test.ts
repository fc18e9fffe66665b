/**
 * The metrics routes on a real server: who may read an app's and the host's metrics (anonymous 401, an app without a
 * grant 404 like a missing one, the host to every signed-in role), range validation, and the answer's shape with
 * stored ticks (the timer is off; a tick is recorded through ctx.metrics as the collector would).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { FakeClock } from "../../../helpers/clock";
import { tickAt } from "../../../helpers/metrics";
import { startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
// a clock that stands still: the recorded tick stays in the newest bucket of every range
const clock = new FakeClock(Date.now());
beforeAll(async () => {
  s = await startTestServer({}, { clock, timings: { metricsEveryMs: 0 } });
  const now = new Date().toISOString();
  s.ctx.appRepo.create("blog", now);
  s.ctx.appRepo.create("shop", now);
  const t = s.ctx.clock.now();
  s.ctx.metrics.record(
    tickAt(t, {
      containers: [
        { containerId: "aaa", name: "blog-web-1", app: "blog", cpuPct: 12.345, memBytes: 1_000_000, memLimitBytes: 8_000_000 },
        { containerId: "bbb", name: "blog-web-2", app: "blog", cpuPct: 3 },
        { containerId: "ccc", name: "blog-db-1", app: "blog", service: "db", cpuPct: 1 },
        { containerId: "ddd", name: "shop-web-1", app: "shop", cpuPct: 50 },
      ],
      host: { cpuPct: 7, load1: 0.5, memUsedBytes: 2e9, memTotalBytes: 8e9, diskFreeBytes: 1e10, diskTotalBytes: 5e10 },
    }),
  );
});
afterAll(() => s.stop());

describe("metrics routes access", () => {
  it.each([
    ["/api/apps/blog/metrics", "anonymous", 401],
    ["/api/metrics/system", "anonymous", 401],
    ["/api/apps/blog/metrics", "viewer without a grant", 404],
    ["/api/apps/blog/metrics", "viewer of blog", 200],
    ["/api/apps/shop/metrics", "viewer of blog", 404],
    ["/api/metrics/system", "viewer without a grant", 200],
    ["/api/apps/blog/metrics", "admin", 200],
    ["/api/apps/missing/metrics", "root", 404],
    ["/api/metrics/system", "api key of a viewer", 200],
  ])("GET %s as %s: %i", async (path, who, status) => {
    const c = await clientFor(who);
    expect((await c.get(path)).status).toBe(status);
  });

  it.each(["forever", "0", "-1h", "401d", "1h30"])("refuses range=%s with 400", async (range) => {
    for (const path of ["/api/apps/blog/metrics", "/api/metrics/system"]) {
      const r = await s.root.get(`${path}?range=${encodeURIComponent(range)}`);
      expect(r.status).toBe(400);
      expect(r.text).toContain("range must be a duration");
    }
  });
});

/** The client of a scenario's caller (users are made once per file). */
async function clientFor(who: string) {
  if (who === "anonymous") return s.anon;
  if (who === "root") return s.root;
  if (who === "admin") return ensureUser("boss", "admin");
  if (who === "api key of a viewer") {
    await ensureUser("keyed", "viewer");
    return s.keyFor("keyed");
  }
  return who === "viewer of blog" ? ensureUser("blogger", "viewer", ["blog"]) : ensureUser("nobody", "viewer");
}

const users = new Map<string, any>();
async function ensureUser(name: string, role: "viewer" | "admin", grants: string[] = []) {
  if (!users.has(name)) users.set(name, await s.user(name, role, grants));
  return users.get(name);
}

describe("metrics routes answers", () => {
  it("answer an app's containers, replicas apart, each with every bucket of the range", async () => {
    const r = await s.root.get("/api/apps/blog/metrics");
    expect(r.status).toBe(200);
    const m = r.json;
    expect(m).toMatchObject({ range: "1h", tier: "raw", step_seconds: 10 });
    expect(m.containers.map((c: any) => [c.id, c.name, c.service])).toEqual([
      ["ccc", "blog-db-1", "db"],
      ["aaa", "blog-web-1", "web"],
      ["bbb", "blog-web-2", "web"],
    ]);
    const web = m.containers[1];
    expect(web.points).toHaveLength(360);
    expect(web.points.at(-1)).toEqual({
      t: web.points.at(-1).t,
      cpu_pct: 12.35,
      cpu_limit_pct: null,
      mem_bytes: 1_000_000,
      mem_limit_bytes: 8_000_000,
      net_rx_bps: null,
      net_tx_bps: null,
      blk_read_bps: null,
      blk_write_bps: null,
      cpu_pct_max: 12.35,
      mem_bytes_max: 1_000_000,
      restarts: null,
    });
    expect(web.points[0].cpu_pct).toBeNull();
    expect(Date.parse(m.to) - Date.parse(m.from)).toBe(3_600_000);
    const day = (await s.root.get("/api/apps/blog/metrics?range=24h")).json;
    expect(day).toMatchObject({ range: "24h", tier: "1m", step_seconds: 60 });
    expect(day.containers[1].points.at(-1).cpu_pct).toBe(12.35);
  });

  it("answer the host's metrics", async () => {
    const m = (await s.root.get("/api/metrics/system?range=7d")).json;
    expect(m).toMatchObject({ range: "7d", tier: "5m", step_seconds: 300 });
    expect(m.points).toHaveLength(2016);
    expect(m.points.at(-1)).toMatchObject({
      cpu_pct: 7,
      load1: 0.5,
      mem_used_bytes: 2e9,
      mem_total_bytes: 8e9,
      disk_free_bytes: 1e10,
    });
    expect(m.points.at(-2).cpu_pct).toBeNull();
  });

  it("answer every range the dashboard's Metrics tab offers, 1y (a year of 365 days) included", async () => {
    const want = { "1h": "raw", "24h": "1m", "7d": "5m", "30d": "1h", "1y": "1h" } as const;
    for (const [range, tier] of Object.entries(want)) {
      for (const path of ["/api/apps/blog/metrics", "/api/metrics/system"]) {
        const r = await s.root.get(`${path}?range=${range}`);
        expect([range, r.status]).toEqual([range, 200]);
        expect(r.json).toMatchObject({ range, tier });
      }
    }
    const year = (await s.root.get("/api/metrics/system?range=1y")).json;
    expect(year.points).toHaveLength(8760);
    expect(year.points.at(-1).cpu_pct).toBe(7);
    expect((await s.root.get("/api/metrics/system?range=2y")).status).toBe(400);
  });

  it("are in the OpenAPI document with their auth", async () => {
    const doc = (await s.root.get("/api/openapi.json")).json;
    expect(doc.paths["/api/apps/{slug}/metrics"].get["x-sundeck-auth"]).toBe("any signed-in user, app read access");
    expect(doc.paths["/api/metrics/system"].get["x-sundeck-auth"]).toBe("any signed-in user");
  });
});
