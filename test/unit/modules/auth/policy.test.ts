/**
 * Scenario table of who may call what: anonymous, each role, and an API key, against every kind of route.
 * CONTRACT: 401 without credentials, 403 when the role does not allow the route, 404 for an ungranted app.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createApp } from "../../../../src/app";
import type { Client } from "../../../helpers/http";
import { startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
let who: Record<string, Client>;
beforeAll(async () => {
  s = await startTestServer();
  who = {
    anon: s.anon,
    viewer: await s.user("vera", "viewer", ["blog"]),
    manage: await s.user("mona", "manage", ["blog"]),
    admin: await s.user("adam", "admin"),
    super: s.root,
  };
  who.viewerKey = s.keyFor("vera");
  who.adminKey = s.keyFor("adam");
});
afterAll(() => s.stop());

type Row = [method: string, path: string, body: unknown, expected: Record<string, number>];
const ALL = (ok: number) => ({ anon: 401, viewer: ok, manage: ok, admin: ok, super: ok, viewerKey: ok, adminKey: ok });
const SUPER_ONLY = (ok: number) => ({
  anon: 401,
  viewer: 403,
  manage: 403,
  admin: 403,
  super: ok,
  viewerKey: 403,
  adminKey: 403,
});

const TABLE: Row[] = [
  ["GET", "/api/health", undefined, { anon: 200, viewer: 200, super: 200 }],
  ["GET", "/api/setup/status", undefined, { anon: 200 }],
  ["GET", "/api/me", undefined, ALL(200)],
  ["GET", "/api/system/info", undefined, ALL(200)],
  ["GET", "/api/openapi.json", undefined, ALL(200)],
  ["GET", "/api/activity", undefined, ALL(200)],
  ["GET", "/api/activity/recent", undefined, ALL(200)],
  ["GET", "/api/apikeys", undefined, ALL(200)],
  ["GET", "/api/system/public-host", undefined, ALL(200)],
  ["GET", "/api/users", undefined, SUPER_ONLY(200)],
  ["POST", "/api/users", { username: "x", password: "short", role: "viewer" }, SUPER_ONLY(400)],
  ["GET", "/api/users/1", undefined, SUPER_ONLY(200)],
  ["PUT", "/api/users/999", { role: "viewer" }, SUPER_ONLY(404)],
  ["DELETE", "/api/users/999", undefined, SUPER_ONLY(404)],
  ["POST", "/api/users/999/access", { app_slug: "blog" }, SUPER_ONLY(404)],
  ["DELETE", "/api/users/999/access/blog", undefined, SUPER_ONLY(404)],
  ["GET", "/api/system/process-logs", undefined, SUPER_ONLY(200)],
  ["GET", "/api/system/audit-config", undefined, SUPER_ONLY(200)],
  ["PUT", "/api/system/audit-config", { retention_days: "bad" }, SUPER_ONLY(400)],
  ["PUT", "/api/system/public-host", { public_host: "not a host!" }, SUPER_ONLY(400)],
  // app-scoped: a grant is needed below admin; no grant looks like a missing app
  ["GET", "/api/apps/blog/activity", undefined, ALL(200)],
  [
    "GET",
    "/api/apps/shop/activity",
    undefined,
    { anon: 401, viewer: 404, manage: 404, admin: 200, super: 200, viewerKey: 404, adminKey: 200 },
  ],
  // dashboard-only routes need a real session
  [
    "POST",
    "/api/apikeys",
    { name: "" },
    { anon: 401, viewer: 400, manage: 400, admin: 400, super: 400, viewerKey: 403, adminKey: 403 },
  ],
  ["PUT", "/api/me/password", { current_password: "x", new_password: "short" }, { anon: 401, viewer: 400, viewerKey: 403 }],
];

describe("route access", () => {
  for (const [method, path, body, expected] of TABLE) {
    for (const [name, status] of Object.entries(expected)) {
      it(`${method} ${path} as ${name} -> ${status}`, async () => {
        const r = await who[name].request(method, path, body);
        expect(r.status).toBe(status);
        if (status >= 400) {
          expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8");
          expect(r.text.split("\n")).toHaveLength(1);
        }
      });
    }
  }

  it("checks credentials before the body: anonymous bad JSON is 401, not 400", async () => {
    const r = await s.anon.request("POST", "/api/users", "{not json", { "content-type": "application/json" });
    expect(r.status).toBe(401);
    const authed = await s.root.request("POST", "/api/users", "{not json", { "content-type": "application/json" });
    expect(authed.status).toBe(400);
    expect(authed.text).toBe("Bad Request: malformed JSON");
  });

  it("refuses an Authorization header that is not a valid key even when a valid cookie is sent too", async () => {
    const c = s.root.as({ cookie: s.root.cookie, bearer: "sd_nothex" });
    expect((await c.get("/api/me")).status).toBe(401);
  });

  it("refuses a cross-origin state change made with a session cookie", async () => {
    const r = await s.root.post(
      "/api/users",
      { username: "evil", password: "password-123", role: "admin" },
      { origin: "https://evil.example" },
    );
    expect(r.status).toBe(403);
    expect(s.ctx.userRepo.byUsername("evil")).toBeUndefined();
    const same = await s.root.post(
      "/api/users",
      { username: "fine", password: "password-123", role: "viewer" },
      { origin: s.url },
    );
    expect(same.status).toBe(201);
  });

  it("declares an auth requirement on every API route", () => {
    const app = createApp(s.ctx);
    const missing = (app.routes as Array<{ method: string; path: string; hooks: any }>)
      .filter((r) => r.path.startsWith("/api"))
      .filter((r) => r.hooks?.detail?.["x-sundeck-auth"] === undefined)
      .map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });
});
