/**
 * The S3 endpoint as a way into the host's network, on a real server with a real s3rver and a real "internal"
 * HTTP service (a Bun server on loopback standing for another app's 127.0.0.1-bound port or an admin tool):
 * - a manage user cannot point a config at an endpoint of their choice (Bun.S3Client follows redirects and dials by
 *   name, so any endpoint reaches anywhere): only an endpoint an admin set for the app is theirs to use;
 * - metadata (link-local) and other special addresses are refused for everyone, whatever their spelling, and names
 *   are judged at each request (a name resolving to 169.254.169.254 sends nothing);
 * - a stored secret never goes to a new endpoint (the secret must be sent again), targets/test included;
 * - an error never repeats what a non-S3 server answered.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createS3Target } from "../../../src/modules/backups/targets/s3";
import { parseS3Config } from "../../../src/modules/backups/targets/s3-config";
import { composeOf, fakeContainers, fakeStrategy, seedApp } from "../../helpers/backups";
import type { Client } from "../../helpers/http";
import { type S3Server, startS3 } from "../../helpers/s3";
import { startTestServer, type TestServer } from "../../helpers/server";

let s: TestServer;
let s3: S3Server;
let manager: Client;
let admin: Client;
let internal: ReturnType<typeof Bun.serve>;
const hits: string[] = [];
const postgres = fakeStrategy("postgres");

const target = (over: Record<string, unknown> = {}) => ({
  kind: "s3",
  endpoint: s3.endpoint,
  bucket: s3.bucket,
  prefix: "attack/",
  region: "",
  access_key: s3.accessKey,
  secret_key: "stored-secret-1",
  ...over,
});
const config = (t: Record<string, unknown>) => ({ strategy: "postgres", service: "db", target: t });

beforeAll(async () => {
  s3 = await startS3("backups");
  internal = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      hits.push(`${req.method} ${new URL(req.url).pathname}`);
      return new Response("INTERNAL-ONLY token=hunter2", { status: 403, headers: { "content-type": "text/plain" } });
    },
  });
  s = await startTestServer(
    {},
    { backups: { strategy: (id) => (id === "postgres" ? postgres : null), containers: fakeContainers() } },
  );
  seedApp(s.ctx, "shop", composeOf("db", "cache"));
  seedApp(s.ctx, "blog", composeOf("db"));
  manager = await s.user("mallory", "manage", ["shop"]);
  admin = await s.user("ada", "admin");
}, 30_000);
afterAll(async () => {
  await s?.stop();
  await s3?.stop();
  internal?.stop(true);
});

describe("a manage user and the s3 endpoint", () => {
  it("cannot create a config pointing at an endpoint no admin set for the app, so nothing is ever sent there", async () => {
    const before = hits.length;
    const r = await manager.post(
      "/api/apps/shop/backups/configs",
      config(target({ endpoint: `http://127.0.0.1:${internal.port}` })),
    );
    expect(r.status).toBe(403);
    expect((await s.root.get("/api/apps/shop/backups/configs")).json).toEqual([]);
    expect(hits.length).toBe(before);
  });

  it("uses an endpoint an admin set for the app (sending its own secret), and cannot move it elsewhere", async () => {
    const made = await admin.post("/api/apps/shop/backups/configs", config(target()));
    expect(made.status).toBe(201);
    // another service of the same app, to the same endpoint: allowed
    const mine = await manager.post("/api/apps/shop/backups/configs", { ...config(target()), service: "cache" });
    expect(mine.status).toBe(201);
    // the admin's endpoint of app shop is not the manager's for app blog (no grant there anyway), and a new one is refused
    const moved = await manager.put(`/api/backups/configs/${mine.json.id}`, {
      target: target({ endpoint: `http://127.0.0.1:${internal.port}` }),
    });
    expect(moved.status).toBe(403);
    // virtual-hosted style is another host (<bucket>.<host>): refused too
    const named = s3.endpoint.replace("127.0.0.1", "s3.localhost");
    expect((await admin.post("/api/apps/shop/backups/configs", config(target({ endpoint: named })))).status).toBe(201);
    const vhost = await manager.put(`/api/backups/configs/${mine.json.id}`, {
      target: target({ endpoint: named, path_style: false }),
    });
    expect(vhost.status).toBe(403);
    const pathStyle = await manager.put(`/api/backups/configs/${mine.json.id}`, { target: target({ endpoint: named }) });
    expect(pathStyle.status).toBe(200);
    // what the admin set stays usable: schedule and hooks change, the target is sent back as it is
    const kept = await manager.put(`/api/backups/configs/${made.json.id}`, {
      target: target({ secret_key: "********" }),
      retention_count: 3,
    });
    expect(kept.status).toBe(200);
    const run = await manager.post(`/api/backups/configs/${made.json.id}/run`);
    expect(run.status).toBe(202);
    await s.ctx.backups.waitRun(made.json.id);
    expect((await manager.get("/api/apps/shop/backups/runs")).json[0]).toMatchObject({ status: "succeeded" });
  });
});

describe("a stored secret goes only where it was sent for", () => {
  it("needs the secret again when an admin changes the endpoint", async () => {
    const made = (await admin.post("/api/apps/blog/backups/configs", config(target()))).json;
    const elsewhere = `http://127.0.0.1:${internal.port}`;
    const masked = await admin.put(`/api/backups/configs/${made.id}`, {
      target: target({ endpoint: elsewhere, secret_key: "********" }),
    });
    expect(masked.status).toBe(400);
    expect(masked.text).toContain("secret_key must be sent again");
    const omitted = { ...target({ endpoint: elsewhere }) } as Record<string, unknown>;
    delete omitted.secret_key;
    expect((await admin.put(`/api/backups/configs/${made.id}`, { target: omitted })).status).toBe(400);
    const sent = await admin.put(`/api/backups/configs/${made.id}`, {
      target: target({ endpoint: elsewhere, secret_key: "new" }),
    });
    expect(sent.status).toBe(200);
  });

  it("needs it again when the bucket or the access key changes (a manage user cannot aim an admin's secret elsewhere)", async () => {
    const made = (await admin.post("/api/apps/shop/backups/configs", config(target({ secret_key: "admins-own" })))).json;
    for (const over of [{ bucket: "another-app" }, { access_key: "OTHERKEY" }]) {
      const r = await manager.put(`/api/backups/configs/${made.id}`, { target: target({ ...over, secret_key: "********" }) });
      expect({ over, status: r.status }).toEqual({ over, status: 400 });
      expect(r.text).toContain("secret_key must be sent again");
    }
    const own = await manager.put(`/api/backups/configs/${made.id}`, {
      target: target({ bucket: "another-app", secret_key: "managers-own" }),
    });
    expect(own.status).toBe(200);
    const row = s.ctx.db.sqlite.query("SELECT secret_enc FROM backup_configs WHERE id = ?").get(made.id) as {
      secret_enc: string;
    };
    expect(s.ctx.secrets.open(row.secret_enc)).toBe("managers-own");
  });

  it("targets/test takes a config's secret only for that config's endpoint, and a state config's only for super-admins", async () => {
    const made = (await admin.post("/api/apps/blog/backups/configs", config(target()))).json;
    const away = await admin.post("/api/backups/targets/test", {
      target: target({ endpoint: `http://127.0.0.1:${internal.port}`, secret_key: "********" }),
      config_id: made.id,
    });
    expect(away.status).toBe(400);
    const here = await admin.post("/api/backups/targets/test", {
      target: target({ secret_key: "********" }),
      config_id: made.id,
    });
    expect(here.json).toEqual({ ok: true, error: "" });
    const state = (await s.root.post("/api/system/backups/configs", { target: target() })).json;
    const theirs = await admin.post("/api/backups/targets/test", { target: target({ secret_key: "" }), config_id: state.id });
    expect(theirs.status).toBe(403);
  });
});

describe("addresses refused for everyone", () => {
  for (const endpoint of [
    "http://169.254.169.254",
    "http://2852039166",
    "http://0xa9.0xfe.0xa9.0xfe",
    "http://[::ffff:169.254.169.254]",
    "http://[fe80::1]",
    "http://0.0.0.0:9000",
    "http://224.0.0.1",
  ]) {
    it(`refuses ${endpoint} when stored and when tested`, async () => {
      const r = await s.root.post("/api/apps/blog/backups/configs", config(target({ endpoint })));
      expect(r.status).toBe(400);
      expect(r.text).toMatch(/s3 endpoint address .* is refused/);
      const t = await s.root.post("/api/backups/targets/test", { target: target({ endpoint }) });
      expect(t.status).toBe(400);
    });
  }

  it("judges a name at each request: one resolving to a metadata address sends nothing", async () => {
    const before = hits.length;
    const t = createS3Target(
      parseS3Config({
        endpoint: `http://metadata.attack.test:${internal.port}`,
        bucket: "backups",
        accessKey: "a",
        secretKey: "s",
      }),
      { resolve: async () => ["169.254.169.254"] },
    );
    await expect(t.test()).rejects.toThrow(/resolves to 169\.254\.169\.254, which is refused \(link-local\)/);
    await expect(t.get("x/y.gz")).rejects.toThrow(/refused \(link-local\)/);
    await expect(t.delete("x/y.gz")).rejects.toThrow(/refused \(link-local\)/);
    await expect(t.put("x/y.gz", new Response("data").body!, {})).rejects.toThrow(/refused \(link-local\)/);
    expect(hits.length).toBe(before);
  });

  it("lets a LAN or loopback endpoint through for an admin (a self-hosted MinIO)", async () => {
    const t = await s.root.post("/api/backups/targets/test", { target: target() });
    expect(t.json).toEqual({ ok: true, error: "" });
  });
});

describe("errors", () => {
  it("never repeat the body a non-S3 server answered", async () => {
    const t = await s.root.post("/api/backups/targets/test", {
      target: target({ endpoint: `http://127.0.0.1:${internal.port}` }),
    });
    expect(t.json.ok).toBe(false);
    expect(t.json.error).toContain("not an S3 answer");
    expect(t.json.error).not.toContain("hunter2");
    expect(t.json.error).not.toContain("INTERNAL-ONLY");
  });
});
