/** User management over HTTP on a real server: create, list, update, delete, grants, and the activity each writes. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { PASSWORD, startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const lastEntry = async () => (await s.root.get("/api/activity?limit=1")).json.entries[0];

describe("users", () => {
  it("creates a user (201) that can log in, and records it without the password", async () => {
    const r = await s.root.post("/api/users", { username: "paula", password: PASSWORD, role: "manage" });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({ id: expect.any(Number), username: "paula", role: "manage", created_at: expect.any(String) });
    expect((await s.anon.post("/api/auth/login", { username: "paula", password: PASSWORD })).status).toBe(200);
    const created = (await s.root.get("/api/activity?categories=system&limit=1")).json.entries[0];
    expect(created).toMatchObject({
      action: "user_created",
      target: "paula",
      actor_name: "root",
      actor_source: "ui",
      app_slug: null,
    });
    const detail = (await s.root.get(`/api/activity/${created.id}`)).json;
    expect(detail.after_json).toEqual({ id: r.json.id, username: "paula", role: "manage" });
    expect(JSON.stringify(detail)).not.toContain(PASSWORD);
  });

  it.each([
    [{ username: "", password: PASSWORD, role: "viewer" }, "username must be"],
    [{ username: "has space", password: PASSWORD, role: "viewer" }, "username must be"],
    [{ username: "x".repeat(65), password: PASSWORD, role: "viewer" }, "username must be"],
    [{ username: "quinn", password: "1234567", role: "viewer" }, "password must be at least 8 characters"],
    [{ username: "quinn", password: PASSWORD, role: "owner" }, "role must be one of super_admin, admin, manage, viewer"],
  ])("rejects %j with a reason", async (body, reason) => {
    const r = await s.root.post("/api/users", body);
    expect(r.status).toBe(400);
    expect(r.text).toStartWith("Bad Request: ");
    expect(r.text).toContain(reason);
    expect(s.ctx.userRepo.byUsername("quinn")).toBeUndefined();
  });

  it("refuses a duplicate username, whatever its case, with 409", async () => {
    const r = await s.root.post("/api/users", { username: "PAULA", password: PASSWORD, role: "viewer" });
    expect(r.status).toBe(409);
    expect(r.text).toBe("Conflict: user PAULA already exists");
  });

  it("lists users with their grants, and shows one", async () => {
    const id = s.ctx.userRepo.byUsername("paula")!.id;
    await s.root.post(`/api/users/${id}/access`, { app_slug: "blog" });
    const list = (await s.root.get("/api/users")).json;
    expect(list.find((u: any) => u.username === "paula")).toMatchObject({ role: "manage", app_access: ["blog"] });
    expect(list.some((u: any) => "password_hash" in u || "passwordHash" in u)).toBe(false);
    expect((await s.root.get(`/api/users/${id}`)).json).toMatchObject({ username: "paula", app_access: ["blog"] });
    expect((await s.root.get("/api/users/999999")).status).toBe(404);
    expect((await s.root.get("/api/users/abc")).status).toBe(404);
  });

  it("changes role and password, recording before and after", async () => {
    const id = s.ctx.userRepo.byUsername("paula")!.id;
    const r = await s.root.put(`/api/users/${id}`, { role: "viewer", password: "brand-new-password" });
    expect(r.status).toBe(200);
    expect(r.json.role).toBe("viewer");
    expect((await s.anon.post("/api/auth/login", { username: "paula", password: "brand-new-password" })).status).toBe(200);
    const e = (await s.root.get("/api/activity?categories=system&limit=1")).json.entries[0];
    const d = (await s.root.get(`/api/activity/${e.id}`)).json;
    expect(d).toMatchObject({ action: "user_updated", target: "paula" });
    expect(d.before_json.role).toBe("manage");
    expect(d.after_json).toMatchObject({ role: "viewer", password_reset: true });
  });

  it("never removes or demotes the last super-admin", async () => {
    const root = s.ctx.userRepo.byUsername("root")!.id;
    const demote = await s.root.put(`/api/users/${root}`, { role: "admin" });
    expect(demote.status).toBe(409);
    expect((await s.root.del(`/api/users/${root}`)).status).toBe(409);
    expect(s.ctx.userRepo.byId(root)!.role).toBe("super_admin");
    // with a second super-admin, the first may go
    const other = await s.root.post("/api/users", { username: "second-root", password: PASSWORD, role: "super_admin" });
    expect((await s.root.put(`/api/users/${other.json.id}`, { role: "admin" })).status).toBe(200);
  });

  it("grants and revokes app access, as access entries of that app", async () => {
    const u = await s.user("rita", "viewer");
    expect((await u.get("/api/apps/shop/activity")).status).toBe(404);
    expect((await s.root.post(`/api/users/${u.id}/access`, { app_slug: "shop" })).status).toBe(204);
    expect((await u.get("/api/me")).json.app_access).toEqual(["shop"]);
    expect((await u.get("/api/apps/shop/activity")).status).toBe(200);
    const feed = (await u.get("/api/apps/shop/activity")).json.entries;
    expect(feed[0]).toMatchObject({ category: "access", action: "access_granted", app_slug: "shop", target: "rita" });
    expect((await s.root.del(`/api/users/${u.id}/access/shop`)).status).toBe(204);
    expect((await u.get("/api/apps/shop/activity")).status).toBe(404);
    expect((await s.root.del(`/api/users/${u.id}/access/shop`)).status).toBe(404);
    const revoked = (await s.root.get("/api/apps/shop/activity")).json.entries[0];
    expect(revoked).toMatchObject({ category: "access", action: "access_revoked" });
  });

  it("rejects a grant for a malformed slug", async () => {
    const u = await s.user("sam", "viewer");
    const r = await s.root.post(`/api/users/${u.id}/access`, { app_slug: "Bad_Slug" });
    expect(r.status).toBe(400);
    expect(r.text).toStartWith("Bad Request: app_slug must be a slug");
    expect(s.ctx.userRepo.grants(u.id)).toEqual([]);
  });

  it("deletes a user, and the user_deleted snapshot keeps the grants they had", async () => {
    const u = await s.user("tess", "viewer", ["blog", "shop"]);
    expect((await s.root.del(`/api/users/${u.id}`)).status).toBe(204);
    expect((await u.get("/api/me")).status).toBe(401);
    expect((await s.root.get(`/api/users/${u.id}`)).status).toBe(404);
    const e = (await s.root.get("/api/activity?categories=system&limit=1")).json.entries[0];
    expect(e).toMatchObject({ action: "user_deleted", target: "tess" });
    const detail = (await s.root.get(`/api/activity/${e.id}`)).json;
    expect(detail.before_json).toEqual({ id: u.id, username: "tess", role: "viewer", app_access: ["blog", "shop"] });
  });

  it("commits a change and its activity entry together: if the entry cannot be written, the change is undone", async () => {
    s.ctx.db.sqlite.run("ALTER TABLE activity RENAME TO activity_away");
    try {
      const r = await s.root.post("/api/users", { username: "ghost", password: PASSWORD, role: "viewer" });
      expect(r.status).toBe(500);
      expect(r.text).toBe("Internal Server Error");
    } finally {
      s.ctx.db.sqlite.run("ALTER TABLE activity_away RENAME TO activity");
    }
    expect(s.ctx.userRepo.byUsername("ghost")).toBeUndefined();
  });

  it("does not record a change that failed", async () => {
    const before = (await lastEntry()).id;
    await s.root.post("/api/users", { username: "root", password: PASSWORD, role: "viewer" });
    expect((await lastEntry()).id).toBe(before);
  });
});
