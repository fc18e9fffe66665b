/**
 * An attacker's try at alert rules and history on a real server: a manage user of one app reaching another app's
 * rules by id, by moving a rule or through history filters; a non-admin making a global rule; numbers and durations
 * JSON can spell but a rule cannot hold (1e999, -5m); control characters in a rule name, which reaches chat
 * messages, activity entries and terminals; a thousand rules of one app, each judged at every tick.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { MAX_RULES_PER_SCOPE } from "../../../../src/modules/alerts/service";
import type { Client } from "../../../helpers/http";
import { startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
let manager: Client;
let viewer: Client;
let hook: number;
let shopRule: number;
let webRule: number;

const rule = (over: Record<string, unknown> = {}) => ({
  name: "high cpu",
  app_slug: "web",
  kind: "cpu",
  threshold: 80,
  duration: "5m",
  webhook_ids: [hook],
  ...over,
});

beforeAll(async () => {
  s = await startTestServer();
  const now = new Date().toISOString();
  s.ctx.appRepo.create("web", now);
  s.ctx.appRepo.create("shop", now);
  hook = (await s.root.post("/api/webhooks", { name: "ops", url: "https://example.com/hook" })).json.id;
  manager = await s.user("mallory", "manage", ["web"]);
  viewer = await s.user("vic", "viewer", ["web"]);
  shopRule = (await s.root.post("/api/alerts/rules", rule({ app_slug: "shop", name: "shop cpu" }))).json.id;
  webRule = (await manager.post("/api/alerts/rules", rule())).json.id;
  await s.root.post("/api/alerts/rules", rule({ app_slug: null, kind: "backup_failed", threshold: 0, name: "backups" }));
  s.ctx.alerts.raise({ kind: "backup_failed", app_slug: "shop", message: "backup of shop failed" });
});
afterAll(() => s.stop());

describe("another app's rules", () => {
  it.each<[string, () => Promise<{ status: number }>, number]>([
    ["reads it by id", () => manager.get(`/api/alerts/rules/${shopRule}`), 404],
    ["changes it by id", () => manager.put(`/api/alerts/rules/${shopRule}`, { enabled: false }), 404],
    ["moves it into its own app", () => manager.put(`/api/alerts/rules/${shopRule}`, { app_slug: "web" }), 404],
    ["silences it", () => manager.post(`/api/alerts/rules/${shopRule}/silence`, { until: null }), 404],
    ["removes it", () => manager.del(`/api/alerts/rules/${shopRule}`), 404],
    ["moves its own rule there", () => manager.put(`/api/alerts/rules/${webRule}`, { app_slug: "shop" }), 404],
    ["makes its own rule global", () => manager.put(`/api/alerts/rules/${webRule}`, { app_slug: null }), 403],
    ["creates a rule there", () => manager.post("/api/alerts/rules", rule({ app_slug: "shop" })), 404],
    ["creates a global rule", () => manager.post("/api/alerts/rules", rule({ app_slug: null })), 403],
    ["creates a host disk rule", () => manager.post("/api/alerts/rules", rule({ app_slug: null, kind: "disk" })), 403],
    ["as a viewer, silences its own app's rule", () => viewer.post(`/api/alerts/rules/${webRule}/silence`, { until: null }), 403],
  ])("a manage user of web %s: refused", async (_, call, status) => {
    expect((await call()).status).toBe(status);
    const stored = s.ctx.db.sqlite.query("SELECT app_slug, enabled FROM alert_rules WHERE id = ?").get(shopRule);
    expect(stored).toEqual({ app_slug: "shop", enabled: 1 });
  });

  it("sees neither its rules in the list nor its history, whatever the filters", async () => {
    expect(((await manager.get("/api/alerts/rules")).json as any[]).map((r) => r.app_slug)).toEqual(["web"]);
    expect((await s.root.get("/api/alerts/history?app=shop")).json.entries).toHaveLength(1);
    for (const q of ["", "?app=shop", `?rule=${shopRule}`, "?state=firing", "?limit=200&before=9007199254740991"]) {
      expect((await manager.get(`/api/alerts/history${q}`)).json).toEqual({ entries: [], next_before: null });
    }
  });
});

describe("numbers and durations a rule cannot hold", () => {
  const raw = (body: string) =>
    fetch(`${s.url}/api/alerts/rules`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: `session=${s.root.cookie}` },
      body,
    });

  it.each([
    ["threshold 1e999", '"threshold": 1e999'],
    ["threshold -1e999", '"threshold": -1e999'],
    ["threshold -1", '"threshold": -1'],
  ])("refuses %s", async (_, field) => {
    const r = await raw(`{"name": "x", "app_slug": "web", "kind": "cpu", ${field}, "duration": "5m"}`);
    expect(r.status).toBe(400);
  });

  it.each(["-5m", "5", "1e309h", "99999999999999999999999999h", "25h", "5 m", "m", ""])(
    "refuses the duration %p",
    async (duration) => {
      const r = await s.root.post("/api/alerts/rules", rule({ duration }));
      expect(r.status).toBe(400);
    },
  );
});

describe("control characters in a rule name", () => {
  it.each([
    ["a line break", "cpu\r\nX-Injected: 1"],
    ["a terminal escape", "cpu \u001b]8;;https://evil.test\u0007click\u001b]8;;\u0007"],
    ["a NUL", "cpu\u0000"],
    ["a DEL", "cpu\u007f"],
    ["a tab", "cpu\tweb"],
  ])("refuses %s, on create and on change", async (_, name) => {
    const created = await manager.post("/api/alerts/rules", rule({ name }));
    expect(created.status).toBe(400);
    expect(created.text).toContain("name");
    expect((await manager.put(`/api/alerts/rules/${webRule}`, { name })).status).toBe(400);
    expect((await manager.get(`/api/alerts/rules/${webRule}`)).json.name).toBe("high cpu");
  });

  it("keeps a name with non-ASCII letters, trimmed", async () => {
    const r = await manager.post("/api/alerts/rules", rule({ name: "  Überlast – web ☕ " }));
    expect(r.status).toBe(201);
    expect(r.json.name).toBe("Überlast – web ☕");
  });
});

describe("how many rules an app holds", () => {
  it(`refuses a manage user's rule past ${MAX_RULES_PER_SCOPE} of one app, created or moved in, since each costs every tick`, async () => {
    const held = (s.ctx.db.sqlite.query("SELECT COUNT(*) AS n FROM alert_rules WHERE app_slug = 'web'").get() as { n: number }).n;
    for (let i = held; i < MAX_RULES_PER_SCOPE; i++) {
      expect((await manager.post("/api/alerts/rules", rule({ name: `r${i}`, duration: `${3600 - i}s` }))).status).toBe(201);
    }
    const over = await manager.post("/api/alerts/rules", rule({ name: "one too many" }));
    expect(over.status).toBe(400);
    expect(over.text).toContain(`app web has ${MAX_RULES_PER_SCOPE} alert rules`);
    const moved = await s.root.put(`/api/alerts/rules/${shopRule}`, { app_slug: "web" });
    expect(moved.status).toBe(400);
    // a change within the app is not a new rule
    expect((await manager.put(`/api/alerts/rules/${webRule}`, { threshold: 90 })).status).toBe(200);
    expect((await s.root.post("/api/alerts/rules", rule({ app_slug: "shop" }))).status).toBe(201);
  });
});
