/**
 * Secrets a backup run could spill to someone who may only read the app, on a real server (fake strategy and
 * containers): a failing hook's output goes into the run's `error`, which viewers read, so the container's
 * environment values (its passwords) are masked there and in the log line. And a secret sealed under another
 * master_secret is not a 500 that blocks sending a new one.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createSecrets, deriveKeys } from "../../../src/lib/crypto";
import { LogSink } from "../../../src/log/logger";
import { composeOf, fakeContainer, fakeContainers, fakeStrategy, seedApp } from "../../helpers/backups";
import type { Client } from "../../helpers/http";
import { startTestServer, type TestServer } from "../../helpers/server";

let s: TestServer;
let viewer: Client;
const logs = new LogSink({ stdout: false });
const postgres = fakeStrategy("postgres");
const containers = fakeContainers();
const SECRET = "pg-pass-7f3a9c1e";
const withEnv = { ...fakeContainer("db"), env: [`POSTGRES_PASSWORD=${SECRET}`, "PATH=/usr/bin:/bin", "SHORT=abc"] };
containers.find = async () => withEnv;
containers.exec = async (_c, cmd) =>
  cmd.includes("leak")
    ? { code: 1, output: `connecting as postgres:${SECRET}@db with /usr/bin:/bin abc\npsql: password ${SECRET} refused` }
    : { code: 0, output: "" };

beforeAll(async () => {
  s = await startTestServer({}, { logs, backups: { strategy: (id) => (id === "postgres" ? postgres : null), containers } });
  seedApp(s.ctx, "shop", composeOf("db"));
  viewer = await s.user("vic", "viewer", ["shop"]);
}, 30_000);
afterAll(() => s.stop());

describe("hook output", () => {
  it("masks the container's env values in a failing pre hook's error, which viewers read", async () => {
    const c = (
      await s.root.post("/api/apps/shop/backups/configs", {
        strategy: "postgres",
        service: "db",
        target: { kind: "local" },
        pre_hooks: ["psql -c 'select 1' # leak"],
      })
    ).json;
    await s.root.post(`/api/backups/configs/${c.id}/run`);
    await s.ctx.backups.waitRun(c.id);
    const run = (await viewer.get("/api/apps/shop/backups/runs")).json[0];
    expect(run.status).toBe("failed");
    expect(run.error).toBe("pre hook 1 failed (exit 1): psql: password [env] refused");
    expect(logs.snapshot().join("\n")).not.toContain(SECRET);
  });

  it("masks them in a failing post hook's note on a good run", async () => {
    const c = (
      await s.root.post("/api/apps/shop/backups/configs", {
        strategy: "postgres",
        service: "db",
        target: { kind: "local" },
        post_hooks: ["unlock # leak"],
      })
    ).json;
    await s.root.post(`/api/backups/configs/${c.id}/run`);
    await s.ctx.backups.waitRun(c.id);
    const run = (await viewer.get("/api/apps/shop/backups/runs")).json[0];
    expect(run.status).toBe("succeeded");
    expect(run.error).toContain("post hook 1 failed (exit 1)");
    expect(run.error).not.toContain(SECRET);
    expect(logs.snapshot().join("\n")).not.toContain(SECRET);
  });
});

describe("master_secret changed", () => {
  it("takes a new secret for a config whose stored one no longer opens, and asks for it when the mask is sent", async () => {
    const target = {
      kind: "s3",
      endpoint: "http://127.0.0.1:9",
      bucket: "backups",
      prefix: "",
      region: "",
      access_key: "AK",
      secret_key: "first",
    };
    const c = (await s.root.post("/api/apps/shop/backups/configs", { strategy: "postgres", service: "db", target })).json;
    const foreign = createSecrets(deriveKeys("another-master-secret-of-32-chars!!").encryption).seal("first");
    s.ctx.db.sqlite.query("UPDATE backup_configs SET secret_enc = ? WHERE id = ?").run(foreign, c.id);
    // the connection test of the stored config asks for the secret too (was a 500)
    const tested = await s.root.post("/api/backups/targets/test", {
      target: { ...target, secret_key: "********" },
      config_id: c.id,
    });
    expect(tested.status).toBe(400);
    expect(tested.text).toContain("cannot be opened");
    const masked = await s.root.put(`/api/backups/configs/${c.id}`, { target: { ...target, secret_key: "********" } });
    expect(masked.status).toBe(400);
    expect(masked.text).toContain("cannot be opened");
    const sent = await s.root.put(`/api/backups/configs/${c.id}`, { target: { ...target, secret_key: "second" } });
    expect(sent.status).toBe(200);
    const row = s.ctx.db.sqlite.query("SELECT secret_enc FROM backup_configs WHERE id = ?").get(c.id) as { secret_enc: string };
    expect(s.ctx.secrets.open(row.secret_enc)).toBe("second");
  });
});
