/**
 * /api/webhooks on a real server with allow_private_destinations off: who may do what, the write-only secret (masked,
 * kept, cleared, sealed at rest), validation, the activity each change writes (no secret, no URL path), the test
 * route's refusal of private destinations and the delivery log's 404s.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Client } from "../../../helpers/http";
import { startTestServer, type TestServer } from "../../../helpers/server";

const SECRET = "s3cret-signing-key-xyz";
const SLACK = "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX";
/** The hint a refusal of a LAN address ends with. */
const LAN = "; set webhooks.allow_private_destinations: true to allow LAN destinations";

let s: TestServer;
let admin: Client;
let manage: Client;
let viewer: Client;
beforeAll(async () => {
  s = await startTestServer();
  admin = await s.user("ada", "admin");
  manage = await s.user("max", "manage", ["blog"]);
  viewer = await s.user("vic", "viewer", ["blog"]);
});
afterAll(() => s.stop());

const row = (id: number) => s.ctx.db.sqlite.query("SELECT * FROM webhooks WHERE id = ?").get(id) as Record<string, any>;
const lastWebhookEntry = async () => {
  const e = (await s.root.get("/api/activity?categories=webhook&limit=1")).json.entries[0];
  return (await s.root.get(`/api/activity/${e.id}`)).json;
};

describe("who may do what", () => {
  let id: number;
  beforeAll(async () => {
    id = (await s.root.post("/api/webhooks", { name: "ops", url: SLACK, kind: "slack", secret: SECRET })).json.id;
  });

  const cases: Array<[string, () => Client, Record<string, number>]> = [
    ["anonymous", () => s.anon, { list: 401, create: 401, update: 401, remove: 401, test: 401, deliveries: 401 }],
    ["viewer", () => viewer, { list: 200, create: 403, update: 403, remove: 403, test: 403, deliveries: 200 }],
    ["manage", () => manage, { list: 200, create: 403, update: 403, remove: 403, test: 403, deliveries: 200 }],
    ["admin", () => admin, { list: 200, create: 201, update: 200, remove: 204, test: 200, deliveries: 200 }],
    ["super_admin", () => s.root, { list: 200, create: 201, update: 200, remove: 204, test: 200, deliveries: 200 }],
  ];

  it.each(cases)("%s", async (_, who, want) => {
    const c = who();
    expect((await c.get("/api/webhooks")).status).toBe(want.list);
    const created = await c.post("/api/webhooks", { name: "tmp", url: "https://example.com/hook" });
    expect(created.status).toBe(want.create);
    expect((await c.put(`/api/webhooks/${id}`, { enabled: true })).status).toBe(want.update);
    expect((await c.get(`/api/webhooks/${id}/deliveries`)).status).toBe(want.deliveries);
    expect((await c.post("/api/webhooks/test", { url: "http://10.0.0.1/" })).status).toBe(want.test);
    const target = created.status === 201 ? created.json.id : id;
    expect((await c.del(`/api/webhooks/${target}`)).status).toBe(want.remove);
  });

  it("shows non-admins the URL's origin only, since Slack and Discord URLs carry a token", async () => {
    const mine = (c: Client) => c.get("/api/webhooks").then((r) => r.json.find((w: any) => w.id === id));
    expect(await mine(viewer)).toEqual({
      id,
      name: "ops",
      url: "https://hooks.slack.com",
      kind: "slack",
      secret: "********",
      enabled: true,
    });
    expect((await mine(manage)).url).toBe("https://hooks.slack.com");
    expect((await mine(admin)).url).toBe(SLACK);
  });
});

describe("the write-only secret", () => {
  it("is masked in every answer and sealed at rest", async () => {
    const r = await admin.post("/api/webhooks", { name: "signed", url: "https://example.com/in", secret: SECRET });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(Number),
      name: "signed",
      url: "https://example.com/in",
      kind: "generic",
      secret: "********",
      enabled: true,
    });
    const stored = row(r.json.id);
    expect(stored.secret_enc).not.toContain(SECRET);
    expect(s.ctx.secrets.open(stored.secret_enc)).toBe(SECRET);
    const listed = (await admin.get("/api/webhooks")).text;
    expect(listed).not.toContain(SECRET);
    expect(s.ctx.logs.snapshot().some((l) => l.includes(SECRET))).toBe(false);
  });

  it('answers "" when none is set', async () => {
    const r = await admin.post("/api/webhooks", { name: "plain", url: "https://example.com/plain" });
    expect(r.json.secret).toBe("");
    expect(row(r.json.id).secret_enc).toBeNull();
  });

  it('is kept when a PUT omits it or sends the mask, replaced by a new one, cleared by ""', async () => {
    const { id } = (await admin.post("/api/webhooks", { name: "keep", url: "https://example.com/k", secret: SECRET })).json;
    const sealed = () => row(id).secret_enc as string | null;
    const first = sealed();

    const omitted = await admin.put(`/api/webhooks/${id}`, { name: "keep2" });
    expect(omitted.json).toMatchObject({ name: "keep2", url: "https://example.com/k", secret: "********" });
    expect(sealed()).toBe(first);

    expect((await admin.put(`/api/webhooks/${id}`, { name: "keep3", secret: "********" })).json.secret).toBe("********");
    expect(sealed()).toBe(first);

    expect((await admin.put(`/api/webhooks/${id}`, { secret: "another-secret" })).json.secret).toBe("********");
    expect(s.ctx.secrets.open(sealed()!)).toBe("another-secret");

    expect((await admin.put(`/api/webhooks/${id}`, { secret: "" })).json.secret).toBe("");
    expect(sealed()).toBeNull();
  });

  it("changes only the fields a PUT gives", async () => {
    const { id } = (await admin.post("/api/webhooks", { name: "partial", url: "https://example.com/p", kind: "discord" })).json;
    const r = await admin.put(`/api/webhooks/${id}`, { enabled: false });
    expect(r.json).toEqual({ id, name: "partial", url: "https://example.com/p", kind: "discord", secret: "", enabled: false });
    expect((await admin.put("/api/webhooks/999999", { enabled: false })).status).toBe(404);
    expect((await admin.put("/api/webhooks/abc", { enabled: false })).status).toBe(404);
    expect((await admin.del("/api/webhooks/999999")).status).toBe(404);
  });
});

describe("validation", () => {
  it.each([
    [{ url: "https://example.com/" }, "name is required"],
    [{ name: "x" }, "url is required"],
    [{ name: "", url: "https://example.com/" }, "name must be 1 to 100 characters"],
    [{ name: "   ", url: "https://example.com/" }, "name must be 1 to 100 characters"],
    [{ name: "n".repeat(101), url: "https://example.com/" }, "name must be 1 to 100 characters"],
    [{ name: "a\nb", url: "https://example.com/" }, "name must be 1 to 100 characters"],
    [{ name: 5, url: "https://example.com/" }, "name must be 1 to 100 characters"],
    [{ name: "x", url: "not a url" }, "url must be an http or https URL"],
    [{ name: "x", url: "ftp://example.com/" }, "url must be an http or https URL"],
    [{ name: "x", url: "file:///etc/passwd" }, "url must be an http or https URL"],
    [{ name: "x", url: "javascript:alert(1)" }, "url must be an http or https URL"],
    [{ name: "x", url: "https://user:pw@example.com/" }, "url must not contain a user name or password"],
    [{ name: "x", url: "https://user@example.com/" }, "url must not contain a user name or password"],
    [{ name: "x", url: `https://example.com/${"a".repeat(2048)}` }, "url must be an http or https URL of at most 2048"],
    [{ name: "x", url: "http://127.0.0.1:8080/" }, "url must name a public address (127.0.0.1 is loopback)"],
    [{ name: "x", url: "http://0x7f.1/" }, "url must name a public address (127.0.0.1 is loopback)"],
    [{ name: "x", url: "http://2130706433/" }, "url must name a public address (127.0.0.1 is loopback)"],
    [{ name: "x", url: "http://[::1]/" }, "url must name a public address"],
    [{ name: "x", url: "http://[::ffff:10.0.0.1]/" }, "url must name a public address (10.0.0.1 is private)"],
    [
      { name: "x", url: "http://169.254.169.254/latest/meta-data/" },
      "url must name a public address (169.254.169.254 is link-local)",
    ],
    [{ name: "x", url: "http://localhost:9000/" }, "url must name a public address (localhost is loopback)"],
    [{ name: "x", url: "https://example.com/", kind: "teams" }, "kind must be one of generic, slack, discord"],
    [{ name: "x", url: "https://example.com/", enabled: "yes" }, "enabled must be true or false"],
    [{ name: "x", url: "https://example.com/", secret: "s".repeat(1025) }, "secret must be at most 1024 characters"],
  ])("refuses %j with 400", async (body, reason) => {
    const before = (await admin.get("/api/webhooks")).json.length;
    const r = await admin.post("/api/webhooks", body);
    expect(r.status).toBe(400);
    expect(r.text).toStartWith("Bad Request: ");
    expect(r.text).toContain(reason);
    expect((await admin.get("/api/webhooks")).json.length).toBe(before);
  });

  it("names the setting that allows a LAN destination, and only for what it allows", async () => {
    const lan = await admin.post("/api/webhooks", { name: "lan", url: "http://10.0.0.5/hook" });
    expect(lan.status).toBe(400);
    expect(lan.text).toBe(`Bad Request: url must name a public address (10.0.0.5 is private)${LAN}`);
    const metadata = await admin.post("/api/webhooks", { name: "md", url: "http://169.254.169.254/" });
    expect(metadata.text).toBe("Bad Request: url must name a public address (169.254.169.254 is link-local)");
  });

  it("refuses a malformed body", async () => {
    const r = await admin.request("POST", "/api/webhooks", "{nope", { "content-type": "application/json" });
    expect(r.status).toBe(400);
  });

  it("stores the URL in canonical form without its fragment", async () => {
    const r = await admin.post("/api/webhooks", { name: "canon", url: "  HTTPS://Example.COM:443/a/../hook?x=1#frag " });
    expect(r.json.url).toBe("https://example.com/hook?x=1");
  });
});

describe("activity", () => {
  it("records created, updated and removed with the secret redacted and the URL cut to its origin", async () => {
    const { id } = (await admin.post("/api/webhooks", { name: "audited", url: SLACK, kind: "slack", secret: SECRET })).json;
    const created = await lastWebhookEntry();
    expect(created).toMatchObject({
      category: "webhook",
      action: "webhook_created",
      target: "audited",
      actor_name: "ada",
      before_json: null,
    });
    expect(created.after_json).toEqual({
      id,
      name: "audited",
      url: "https://hooks.slack.com",
      kind: "slack",
      secret: "[redacted]",
      enabled: true,
    });

    await admin.put(`/api/webhooks/${id}`, { name: "audited2", secret: "new-secret-value" });
    const updated = await lastWebhookEntry();
    expect(updated).toMatchObject({ action: "webhook_updated", target: "audited2" });
    expect(updated.before_json.name).toBe("audited");
    expect(updated.after_json.name).toBe("audited2");

    await admin.del(`/api/webhooks/${id}`);
    const removed = await lastWebhookEntry();
    expect(removed).toMatchObject({ action: "webhook_removed", target: "audited2", after_json: null });

    for (const e of [created, updated, removed]) {
      const text = JSON.stringify(e);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain("new-secret-value");
      expect(text).not.toContain("XXXXXXXXXXXXXXXX");
    }
  });
});

describe("test route and delivery log", () => {
  it("answers a refused private destination as a failed test, without sending anything", async () => {
    for (const url of ["http://127.0.0.1:9/", "http://0177.0.0.1:9/", "http://[::ffff:7f00:1]:9/", "http://localhost:9/"]) {
      const r = await admin.post("/api/webhooks/test", { url, kind: "generic", secret: "x" });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ ok: false, status: 0, error: `destination address 127.0.0.1 refused (loopback)${LAN}` });
    }
  });

  it.each([
    [{}, 400, "url is required"],
    [{ url: "ftp://example.com/" }, 400, "url must be an http or https URL"],
    [{ url: "https://a:b@example.com/" }, 400, "url must not contain a user name or password"],
    [{ url: "https://example.com/", kind: "teams" }, 400, "kind must be one of"],
    [{ id: 999999 }, 404, ""],
  ])("answers %j with %i", async (body, status, reason) => {
    const r = await admin.post("/api/webhooks/test", body);
    expect(r.status).toBe(status);
    expect(r.text).toContain(reason);
  });

  it("tests a stored destination by id and logs the outcome as a test delivery", async () => {
    const { id } = (await admin.post("/api/webhooks", { name: "by-id", url: "https://example.com/x" })).json;
    // the stored URL is public; the test overrides it with a refused one so nothing leaves this machine
    const r = await admin.post("/api/webhooks/test", { id, url: "http://10.1.2.3/" });
    expect(r.json).toEqual({ ok: false, status: 0, error: `destination address 10.1.2.3 refused (private)${LAN}` });
    const log = await admin.get(`/api/webhooks/${id}/deliveries`);
    expect(log.json).toEqual([
      {
        id: expect.any(Number),
        event: "test",
        status: null,
        duration_ms: expect.any(Number),
        attempts: 1,
        error: `destination address 10.1.2.3 refused (private)${LAN}`,
        created_at: expect.any(String),
      },
    ]);
  });

  it("answers 404 for the deliveries of a missing destination and 400 for a bad limit", async () => {
    expect((await admin.get("/api/webhooks/999999/deliveries")).status).toBe(404);
    const { id } = (await admin.post("/api/webhooks", { name: "lim", url: "https://example.com/l" })).json;
    expect((await admin.get(`/api/webhooks/${id}/deliveries?limit=0`)).status).toBe(400);
    expect((await admin.get(`/api/webhooks/${id}/deliveries?limit=x`)).status).toBe(400);
    expect((await admin.get(`/api/webhooks/${id}/deliveries?limit=500`)).status).toBe(200);
  });
});
