/** API keys on a real server: sd_ keys stored as a keyed HMAC, their owner's rights, expiry, revocation. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { hmacHex } from "../../../../src/lib/crypto";
import { FakeClock } from "../../../helpers/clock";
import { startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
const clock = new FakeClock(Date.now());
beforeAll(async () => {
  s = await startTestServer({}, { clock });
});
afterAll(() => s.stop());

describe("API keys", () => {
  it("are sd_ plus 64 hex, shown once, and stored only as a keyed HMAC", async () => {
    const r = await s.root.post("/api/apikeys", { name: "ci" });
    expect(r.status).toBe(201);
    expect(r.json.key).toMatch(/^sd_[0-9a-f]{64}$/);
    expect(r.json).toMatchObject({ name: "ci", expires_at: null });
    const rows = s.ctx.db.sqlite.query("SELECT * FROM api_keys WHERE id = ?").all(r.json.id) as any[];
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(r.json.key);
    expect(rows[0].key_hash).toBe(hmacHex(s.ctx.keys.apiKey, r.json.key));
    const list = await s.root.get("/api/apikeys");
    expect(list.json.map((k: any) => k.id)).toContain(r.json.id);
    expect(list.text).not.toContain(r.json.key);
  });

  it("authenticate as their owner with the owner's role and grants", async () => {
    await s.user("kim", "viewer", ["blog"]);
    const key = s.keyFor("kim");
    expect((await key.get("/api/me")).json).toMatchObject({ username: "kim", role: "viewer", app_access: ["blog"] });
    expect((await key.get("/api/apps/blog/activity")).status).toBe(200);
    expect((await key.get("/api/apps/shop/activity")).status).toBe(404);
    expect((await key.get("/api/users")).status).toBe(403);
    // a later role change applies to the key at once
    const id = s.ctx.userRepo.byUsername("kim")!.id;
    await s.root.put(`/api/users/${id}`, { role: "admin" });
    expect((await key.get("/api/apps/shop/activity")).status).toBe(200);
  });

  it("are refused once expired", async () => {
    await s.user("lee", "viewer");
    const soon = new Date(clock.now() + 60_000).toISOString();
    const key = s.keyFor("lee", "short-lived", soon);
    expect((await key.get("/api/me")).status).toBe(200);
    clock.advance(61_000);
    const r = await key.get("/api/me");
    expect(r.status).toBe(401);
    expect(r.text).toBe("Unauthorized");
  });

  it("reject an expiry in the past or not in RFC 3339", async () => {
    expect((await s.root.post("/api/apikeys", { name: "x", expires_at: "2001-01-01T00:00:00Z" })).status).toBe(400);
    const bad = await s.root.post("/api/apikeys", { name: "x", expires_at: "tomorrow" });
    expect(bad.status).toBe(400);
    expect(bad.text).toBe("Bad Request: expires_at must be an RFC 3339 time");
  });

  it("stop working when revoked, and only the owner or a super-admin may revoke", async () => {
    const mine = await s.user("max", "manage");
    const created = await mine.post("/api/apikeys", { name: "deploy" });
    const key = s.anon.as({ bearer: created.json.key });
    expect((await key.get("/api/me")).status).toBe(200);
    const stranger = await s.user("ned", "manage");
    expect((await stranger.del(`/api/apikeys/${created.json.id}`)).status).toBe(404);
    expect((await mine.del(`/api/apikeys/${created.json.id}`)).status).toBe(204);
    expect((await key.get("/api/me")).status).toBe(401);
    const other = s.keyFor("ned");
    expect((await s.root.del(`/api/apikeys/${other.keyId}`)).status).toBe(204);
    expect((await other.get("/api/me")).status).toBe(401);
  });

  it("die with their owner", async () => {
    await s.user("oz", "viewer");
    const key = s.keyFor("oz");
    const id = s.ctx.userRepo.byUsername("oz")!.id;
    expect((await s.root.del(`/api/users/${id}`)).status).toBe(204);
    expect((await key.get("/api/me")).status).toBe(401);
  });

  it("cannot mint more keys: creating a key needs a session", async () => {
    const key = s.keyFor("root");
    const r = await key.post("/api/apikeys", { name: "child" });
    expect(r.status).toBe(403);
  });

  it.each(["sd_", "sd_zz", `sd_${"a".repeat(63)}`, `sd_${"A".repeat(64)}`, "Bearer", `${"a".repeat(64)}`])(
    "refuse a malformed bearer %p",
    async (bearer) => {
      expect((await s.anon.as({ bearer }).get("/api/me")).status).toBe(401);
    },
  );

  it("record creation and revocation in the activity log without the key", async () => {
    const r = await s.root.post("/api/apikeys", { name: "audited" });
    await s.root.del(`/api/apikeys/${r.json.id}`);
    const entries = (await s.root.get("/api/activity?categories=system&limit=5")).json.entries;
    const [revoked, created] = entries.filter((e: any) => e.target === "audited");
    expect(created).toMatchObject({ action: "apikey_created", actor_source: "ui", actor_name: "root" });
    expect(revoked).toMatchObject({ action: "apikey_revoked" });
    const detail = (await s.root.get(`/api/activity/${created.id}`)).json;
    expect(detail.after_json).toMatchObject({ name: "audited", user: "root" });
    expect(JSON.stringify(detail)).not.toContain(r.json.key);
  });
});
