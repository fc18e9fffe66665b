/**
 * Alert rules and history over HTTP on a real server: who sees and changes which rules (anonymous, viewer, manage
 * with and without a grant, admin), the 400s of bad rules, silence, activity entries, and the filtered history.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Client } from "../../../helpers/http";
import { startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
let viewer: Client;
let manager: Client;
let hook: number;

const rule = (over: Record<string, unknown> = {}) => ({
  name: "high cpu",
  app_slug: "web",
  kind: "cpu",
  threshold: 80,
  duration: "5m",
  webhook_ids: [hook],
  enabled: true,
  ...over,
});

beforeAll(async () => {
  s = await startTestServer();
  const now = new Date().toISOString();
  s.ctx.appRepo.create("web", now);
  s.ctx.appRepo.create("shop", now);
  hook = Number(
    (
      s.ctx.db.sqlite
        .query(
          "INSERT INTO webhooks (name, url, kind, enabled, created_at, updated_at) VALUES ('ops', 'https://example.com/h', 'generic', 1, ?, ?) RETURNING id",
        )
        .get(now, now) as { id: number }
    ).id,
  );
  viewer = await s.user("vera", "viewer", ["web"]);
  manager = await s.user("max", "manage", ["web"]);
});
afterAll(() => s.stop());

describe("rules: who may do what", () => {
  it("answers 401 to anonymous callers on every route", async () => {
    expect((await s.anon.get("/api/alerts/rules")).status).toBe(401);
    expect((await s.anon.post("/api/alerts/rules", rule())).status).toBe(401);
    expect((await s.anon.put("/api/alerts/rules/1", { enabled: false })).status).toBe(401);
    expect((await s.anon.del("/api/alerts/rules/1")).status).toBe(401);
    expect((await s.anon.get("/api/alerts/history")).status).toBe(401);
  });

  it("lets an admin create a global rule and an app rule, and records them (category alert, after)", async () => {
    const g = await s.root.post(
      "/api/alerts/rules",
      rule({ name: "disk low", app_slug: null, kind: "disk", threshold: 15, duration: "0s" }),
    );
    expect(g.status).toBe(201);
    expect(g.json).toEqual({
      id: expect.any(Number),
      name: "disk low",
      app_slug: null,
      kind: "disk",
      threshold: 15,
      duration: "0s",
      webhook_ids: [hook],
      enabled: true,
      repeat_interval: null,
      silenced_until: null,
      firing: [],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const shop = await s.root.post(
      "/api/alerts/rules",
      rule({ name: "shop down", app_slug: "shop", kind: "app_down", threshold: 0 }),
    );
    expect(shop.status).toBe(201);
    const e = (await s.root.get("/api/activity?categories=alert&limit=1")).json.entries[0];
    expect(e).toMatchObject({
      category: "alert",
      action: "alert_rule_created",
      target: "shop down",
      app_slug: "shop",
      actor_name: "root",
    });
    const d = (await s.root.get(`/api/activity/${e.id}`)).json;
    expect(d.before_json).toBeNull();
    expect(d.after_json).toMatchObject({ id: shop.json.id, kind: "app_down", app_slug: "shop", webhook_ids: [hook] });
  });

  it("lets a manage user with a grant create rules of that app only", async () => {
    const r = await manager.post("/api/alerts/rules", rule());
    expect(r.status).toBe(201);
    expect((await manager.post("/api/alerts/rules", rule({ app_slug: "shop" }))).status).toBe(404);
    expect((await manager.post("/api/alerts/rules", rule({ app_slug: null }))).status).toBe(403);
    expect((await viewer.post("/api/alerts/rules", rule())).status).toBe(403);
  });

  it("shows each caller the rules of the apps it can read; global ones to admins only", async () => {
    const names = async (c: Client) => ((await c.get("/api/alerts/rules")).json as any[]).map((r) => r.name).sort();
    expect(await names(s.root)).toEqual(["disk low", "high cpu", "shop down"]);
    expect(await names(manager)).toEqual(["high cpu"]);
    expect(await names(viewer)).toEqual(["high cpu"]);
  });

  it("lets callers change and remove only within their scope: 404 out of it, 403 for a viewer", async () => {
    const all = (await s.root.get("/api/alerts/rules")).json as any[];
    const web = all.find((r) => r.name === "high cpu");
    const shop = all.find((r) => r.name === "shop down");
    const disk = all.find((r) => r.name === "disk low");
    expect((await manager.put(`/api/alerts/rules/${shop.id}`, { threshold: 90 })).status).toBe(404);
    expect((await manager.put(`/api/alerts/rules/${disk.id}`, { threshold: 90 })).status).toBe(404);
    expect((await manager.del(`/api/alerts/rules/${shop.id}`)).status).toBe(404);
    expect((await viewer.put(`/api/alerts/rules/${web.id}`, { threshold: 90 })).status).toBe(403);
    expect((await viewer.del(`/api/alerts/rules/${web.id}`)).status).toBe(403);
    // moving a rule to an app out of the caller's scope is refused like creating it there
    expect((await manager.put(`/api/alerts/rules/${web.id}`, { app_slug: "shop" })).status).toBe(404);
    const r = await manager.put(`/api/alerts/rules/${web.id}`, { threshold: 90, repeat_interval: "1h" });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: "high cpu", threshold: 90, repeat_interval: "1h", duration: "5m", app_slug: "web" });
    const e = (await s.root.get("/api/activity?categories=alert&limit=1")).json.entries[0];
    const d = (await s.root.get(`/api/activity/${e.id}`)).json;
    expect(d).toMatchObject({ action: "alert_rule_updated", actor_name: "max", app_slug: "web" });
    expect([d.before_json.threshold, d.after_json.threshold]).toEqual([80, 90]);
    expect((await s.root.get("/api/alerts/rules/999999")).status).toBe(404);
    expect((await s.root.put("/api/alerts/rules/abc", { threshold: 1 })).status).toBe(404);
  });

  it("silences a rule until a time and lifts it, as alert entries", async () => {
    const web = ((await manager.get("/api/alerts/rules")).json as any[])[0];
    const until = "2030-01-02T03:04:05+02:00";
    const r = await manager.post(`/api/alerts/rules/${web.id}/silence`, { until });
    expect(r.status).toBe(200);
    expect(r.json.silenced_until).toBe("2030-01-02T01:04:05.000Z");
    expect((await s.root.get("/api/activity?categories=alert&limit=1")).json.entries[0].action).toBe("alert_rule_silenced");
    expect((await manager.post(`/api/alerts/rules/${web.id}/silence`, { until: null })).json.silenced_until).toBeNull();
    expect((await viewer.post(`/api/alerts/rules/${web.id}/silence`, { until })).status).toBe(403);
    expect((await manager.post(`/api/alerts/rules/${web.id}/silence`, { until: "tomorrow" })).status).toBe(400);
  });

  it("removes a rule (204) and records what it was", async () => {
    const r = await s.root.post("/api/alerts/rules", rule({ name: "to remove" }));
    expect((await manager.del(`/api/alerts/rules/${r.json.id}`)).status).toBe(204);
    expect((await s.root.get(`/api/alerts/rules/${r.json.id}`)).status).toBe(404);
    const e = (await s.root.get("/api/activity?categories=alert&limit=1")).json.entries[0];
    const d = (await s.root.get(`/api/activity/${e.id}`)).json;
    expect(d).toMatchObject({ action: "alert_rule_removed", target: "to remove" });
    expect(d.before_json.name).toBe("to remove");
    expect(d.after_json).toBeNull();
  });
});

describe("rules: bad input", () => {
  it.each([
    [{ kind: "load" }, "kind"],
    [{ threshold: 101, kind: "memory" }, "threshold of memory must be a percent (0 to 100)"],
    [{ threshold: -1 }, "threshold of cpu must be"],
    [{ threshold: 7000 }, "threshold of cpu must be"],
    [{ kind: "cert_expiry", threshold: 400 }, "threshold of cert_expiry must be a number of days"],
    [{ duration: "soon" }, "duration must be a duration"],
    [{ duration: "25h", kind: "app_down", threshold: 0 }, "at most 24h"],
    [{ duration: "2h" }, "duration of cpu must be at most 1h"],
    [{ duration: "61m", kind: "disk", threshold: 10, app_slug: null }, "duration of disk must be at most 1h"],
    [{ app_slug: "nope" }, "app_slug: no app named nope"],
    [{ app_slug: "Bad_Slug" }, "app_slug must be a slug"],
    [{ kind: "disk", app_slug: "web", threshold: 10 }, "app_slug must be null for disk"],
    [{ webhook_ids: [999] }, "webhook_ids: no webhook 999"],
    [{ repeat_interval: "10s" }, "repeat_interval must be null or a duration from 1m to 30d"],
    [{ silenced_until: "2030-01-02" }, "silenced_until must be null or an RFC 3339 time"],
    [{ name: "   " }, "name must not be blank"],
    [{ name: "" }, "name"],
    [{ threshold: "80" }, "threshold"],
  ])("refuses %j with 400 and the reason", async (over, reason) => {
    const before = (await s.root.get("/api/alerts/rules")).json.length;
    const r = await s.root.post("/api/alerts/rules", rule(over));
    expect(r.status).toBe(400);
    expect(r.text).toStartWith("Bad Request: ");
    expect(r.text).toContain(reason);
    expect((await s.root.get("/api/alerts/rules")).json.length).toBe(before);
  });

  it("checks a changed rule whole: a PUT cannot make it invalid", async () => {
    const web = ((await s.root.get("/api/alerts/rules")).json as any[]).find((r) => r.name === "high cpu");
    const r = await s.root.put(`/api/alerts/rules/${web.id}`, { kind: "memory", threshold: 150 });
    expect(r.status).toBe(400);
    expect((await s.root.get(`/api/alerts/rules/${web.id}`)).json.kind).toBe("cpu");
  });
});

describe("history", () => {
  it("pages newest first and shows each caller only the apps it can read", async () => {
    await s.root.post("/api/alerts/rules", rule({ name: "backups", app_slug: null, kind: "backup_failed", threshold: 0 }));
    s.ctx.alerts.raise({ kind: "backup_failed", app_slug: "web", message: "backup of web failed" });
    s.ctx.alerts.raise({ kind: "backup_failed", app_slug: "shop", message: "backup of shop failed" });
    s.ctx.alerts.raise({ kind: "backup_failed", app_slug: "web", message: "backup of web succeeded", ok: true });
    const all = (await s.root.get("/api/alerts/history")).json;
    expect(all.entries.map((e: any) => `${e.state} ${e.app_slug} ${e.message}`)).toEqual([
      "resolved web backup of web succeeded",
      "firing shop backup of shop failed",
      "firing web backup of web failed",
    ]);
    expect(all.entries[0]).toEqual({
      id: expect.any(Number),
      rule_id: expect.any(Number),
      app_slug: "web",
      kind: "backup_failed",
      subject: "web",
      state: "resolved",
      value: null,
      message: "backup of web succeeded",
      created_at: expect.any(String),
    });
    expect(all.next_before).toBeNull();
    const mine = (await viewer.get("/api/alerts/history")).json.entries;
    expect(mine.map((e: any) => e.app_slug)).toEqual(["web", "web"]);
    expect((await viewer.get("/api/alerts/history?app=shop")).json.entries).toEqual([]);

    const p1 = (await s.root.get("/api/alerts/history?limit=2")).json;
    expect(p1.entries.length).toBe(2);
    const p2 = (await s.root.get(`/api/alerts/history?limit=2&before=${p1.next_before}`)).json;
    expect(p2.entries.map((e: any) => e.message)).toEqual(["backup of web failed"]);
    expect(p2.next_before).toBeNull();
    expect((await s.root.get("/api/alerts/history?state=firing&app=web")).json.entries.length).toBe(1);
    const ruleId = all.entries[0].rule_id;
    expect((await s.root.get(`/api/alerts/history?rule=${ruleId}`)).json.entries.length).toBe(3);
  });

  it("shows the firing subjects on the rule", async () => {
    const rules = (await s.root.get("/api/alerts/rules")).json as any[];
    expect(rules.find((r) => r.name === "backups").firing).toEqual([{ subject: "shop", since: expect.any(String), value: null }]);
  });

  it.each([["limit=0"], ["limit=x"], ["before=-1"], ["state=open"], ["rule=x"], ["app=Bad_Slug"]])(
    "refuses ?%s with 400",
    async (q) => {
      expect((await s.root.get(`/api/alerts/history?${q}`)).status).toBe(400);
    },
  );
});
