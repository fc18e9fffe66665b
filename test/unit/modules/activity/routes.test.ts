/** The activity API on a real server: cursor pages, filters, redacted snapshots, the 200 cap, who sees what. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Actor, Category } from "../../../../src/modules/activity/model";
import type { Client } from "../../../helpers/http";
import { startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
let viewer: Client & { id: number };
let other: Client & { id: number };
const sys: Actor = { userId: null, name: "system", source: "system", ip: null };

const seed = (n: number, f: (i: number) => { category: Category; app?: string | null; actor?: Actor }) => {
  s.ctx.db.tx(() => {
    for (let i = 0; i < n; i++) {
      const x = f(i);
      s.ctx.activity.record({
        actor: x.actor ?? sys,
        category: x.category,
        action: "seeded",
        target: `t${i}`,
        summary: `entry ${i}`,
        appSlug: x.app ?? null,
        before: { password: "hunter2", nested: { token: "abc", keep: 1 } },
        after: { keep: 2 },
      });
    }
  });
};

beforeAll(async () => {
  s = await startTestServer();
  viewer = await s.user("val", "viewer", ["blog"]);
  other = await s.user("olga", "viewer", ["shop"]);
  seed(130, (i) => ({ category: (["deploy", "compose", "lifecycle"] as const)[i % 3], app: i % 2 ? "blog" : "shop" }));
  seed(3, () => ({ category: "auth", actor: { userId: viewer.id, name: "val", source: "ui", ip: "10.0.0.1" } }));
  seed(2, () => ({ category: "auth", actor: { userId: other.id, name: "olga", source: "ui", ip: "10.0.0.2" } }));
});
afterAll(() => s.stop());

const all = async (c: Client, query: string) => {
  const out: any[] = [];
  let before: number | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const r = await c.get(`/api/activity?${query}${before ? `&before=${before}` : ""}`);
    expect(r.status).toBe(200);
    out.push(...r.json.entries);
    before = r.json.next_before;
    if (before === null) break;
  }
  return out;
};

describe("activity list", () => {
  it("pages newest first with an exclusive cursor, no gaps or repeats", async () => {
    const first = (await s.root.get("/api/activity")).json;
    expect(first.entries).toHaveLength(50);
    expect(first.next_before).toBe(first.entries[49].id);
    const entries = await all(s.root, "limit=37");
    const ids = entries.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const total = s.ctx.db.sqlite.query<{ n: number }, []>("SELECT count(*) n FROM activity").get()!.n;
    expect(ids).toHaveLength(total);
    const after = (await s.root.get(`/api/activity?before=${ids[10]}&limit=1`)).json.entries[0];
    expect(after.id).toBe(ids[11]);
  });

  it("omits snapshots from lists and returns them, redacted, for one entry", async () => {
    const e = (await s.root.get("/api/activity?categories=deploy&limit=1")).json.entries[0];
    expect(Object.keys(e).sort()).toEqual(
      [
        "action",
        "actor_name",
        "actor_source",
        "app_slug",
        "category",
        "compose_version_id",
        "created_at",
        "error",
        "id",
        "ip",
        "summary",
        "sync_commit_sha",
        "sync_error",
        "sync_status",
        "target",
      ].sort(),
    );
    const d = (await s.root.get(`/api/activity/${e.id}`)).json;
    expect(d.before_json).toEqual({ password: "[redacted]", nested: { token: "[redacted]", keep: 1 } });
    expect(d.after_json).toEqual({ keep: 2 });
    expect(d.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(d.sync_status).toBeNull();
  });

  it("answers an unknown id with a plain-text 404", async () => {
    for (const id of ["999999", "abc", "0", "-1"]) {
      const r = await s.root.get(`/api/activity/${id}`);
      expect(r.status).toBe(404);
      expect(r.text).toBe("Not Found");
      expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    }
  });

  it("filters by categories and by app", async () => {
    const deploys = await all(s.root, "categories=deploy,lifecycle");
    expect(deploys.every((e) => e.category === "deploy" || e.category === "lifecycle")).toBe(true);
    expect(deploys.length).toBe(87);
    const blog = await all(s.root, "app=blog");
    expect(blog.every((e) => e.app_slug === "blog")).toBe(true);
    const both = await all(s.root, "app=blog&categories=compose");
    expect(both.length).toBeGreaterThan(0);
    expect(both.every((e) => e.app_slug === "blog" && e.category === "compose")).toBe(true);
    const perApp = await s.root.get("/api/apps/blog/activity?categories=compose&limit=200");
    expect(perApp.json.entries.map((e: any) => e.id)).toEqual(both.map((e) => e.id));
  });

  it.each([
    ["categories=bogus", 'Bad Request: unknown category "bogus"'],
    ["limit=0", "Bad Request: limit must be a positive whole number"],
    ["limit=ten", "Bad Request: limit must be a positive whole number"],
    ["before=x", "Bad Request: before must be an entry id"],
    ["app=Not_A_Slug", "Bad Request: app must be a slug"],
  ])("rejects %s", async (q, line) => {
    const r = await s.root.get(`/api/activity?${q}`);
    expect(r.status).toBe(400);
    expect(r.text).toStartWith(line);
  });

  it("caps the page at 200", async () => {
    seed(100, () => ({ category: "system" }));
    expect((await s.root.get("/api/activity?limit=1000")).json.entries).toHaveLength(200);
  });
});

describe("activity visibility", () => {
  it("shows a non-admin their granted apps and their own auth entries only", async () => {
    const seen = await all(viewer, "limit=200");
    expect(seen.length).toBeGreaterThan(0);
    for (const e of seen) expect(e.app_slug === "blog" || (e.category === "auth" && e.actor_name === "val")).toBe(true);
    expect(seen.filter((e) => e.category === "auth")).toHaveLength(3);
    expect(seen.some((e) => e.app_slug === "blog")).toBe(true);
    const auth = await all(viewer, "categories=auth");
    expect(auth.map((e) => e.actor_name)).toEqual(["val", "val", "val"]);
  });

  it("hides other entries from a non-admin, including by id", async () => {
    const shopEntry = (await s.root.get("/api/activity?app=shop&limit=1")).json.entries[0];
    expect((await viewer.get(`/api/activity/${shopEntry.id}`)).status).toBe(404);
    expect((await other.get(`/api/activity/${shopEntry.id}`)).status).toBe(200);
    expect((await viewer.get("/api/activity?app=shop")).json.entries).toEqual([]);
    expect((await viewer.get("/api/apps/shop/activity")).status).toBe(404);
  });

  it("shows admins everything", async () => {
    const admin = await s.user("ada", "admin");
    expect((await all(admin, "limit=200")).length).toBe((await all(s.root, "limit=200")).length);
  });

  it("serves the 8 most recent visible entries as the dashboard feed", async () => {
    const r = await s.root.get("/api/activity/recent");
    expect(r.json.entries).toHaveLength(8);
    const latest = (await s.root.get("/api/activity?limit=8")).json.entries;
    expect(r.json.entries).toEqual(latest);
    const mine = (await viewer.get("/api/activity/recent")).json.entries;
    for (const e of mine) expect(e.app_slug === "blog" || e.actor_name === "val").toBe(true);
  });

  it("filters the recent feed like the list, keeping its size", async () => {
    const r = (await s.root.get("/api/activity/recent?categories=auth&limit=100")).json.entries;
    expect(r.length).toBeGreaterThan(0);
    expect(r.length).toBeLessThanOrEqual(8);
    expect(r.every((e: any) => e.category === "auth")).toBe(true);
    const blog = (await s.root.get("/api/activity/recent?app=blog")).json.entries;
    expect(blog).toHaveLength(8);
    expect(blog.every((e: any) => e.app_slug === "blog")).toBe(true);
    expect((await s.root.get("/api/activity/recent?categories=nope")).status).toBe(400);
  });
});

describe("audit purge and retention", () => {
  it("purges everything into one audit_purged entry that records the count and the actor", async () => {
    const before = s.ctx.db.sqlite.query<{ n: number }, []>("SELECT count(*) n FROM activity").get()!.n;
    expect((await viewer.del("/api/activity")).status).toBe(403);
    const r = await s.root.del("/api/activity");
    expect(r.status).toBe(204);
    const left = (await s.root.get("/api/activity")).json.entries;
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({ category: "system", action: "audit_purged", actor_name: "root", actor_source: "ui" });
    expect((await s.root.get(`/api/activity/${left[0].id}`)).json.after_json).toEqual({ deleted: before });
  });

  it("reads and changes retention (super-admin), recording the change", async () => {
    expect((await s.root.get("/api/system/audit-config")).json).toEqual({ retention_days: 365 });
    expect((await s.root.put("/api/system/audit-config", { retention_days: 30 })).json).toEqual({ retention_days: 30 });
    expect((await s.root.get("/api/system/audit-config")).json).toEqual({ retention_days: 30 });
    const e = (await s.root.get("/api/activity?limit=1")).json.entries[0];
    expect(e).toMatchObject({ category: "system", action: "retention_changed" });
    expect((await s.root.get(`/api/activity/${e.id}`)).json).toMatchObject({
      before_json: { retention_days: 365 },
      after_json: { retention_days: 30 },
    });
    for (const bad of [-1, 1.5, 36501, "thirty", null]) {
      const r = await s.root.put("/api/system/audit-config", { retention_days: bad });
      expect(r.status).toBe(400);
      expect(r.text).toBe("Bad Request: retention_days must be a whole number of days from 0 to 36500");
    }
    expect((await s.root.put("/api/system/audit-config", { retention_days: 0 })).status).toBe(200);
  });
});
