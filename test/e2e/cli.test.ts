/** The compiled executable as a user meets it: init, serve, users, apikey, version, and its failure modes. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { type RunningBinary, runCli, startBinary } from "../helpers/binary";
import { Client } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

const dir = tempDir();
const config = join(dir, "config.yaml");
const env = { SUNDECK_MANAGEMENT_PORT: "0" };
let server: RunningBinary;

beforeAll(async () => {
  const init = await runCli(["init", "--config", config, "--data-dir", join(dir, "data"), "--apps-dir", join(dir, "apps")]);
  expect(init.code).toBe(0);
  server = await startBinary(["--config", config], { env });
});
afterAll(async () => {
  await server?.stop();
});

const cli = (args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) =>
  runCli([...args, "--config", config], opts);

describe("sundeck init", () => {
  it("writes a private config with a fresh 64-hex master secret and every documented key", () => {
    expect(statSync(config).mode & 0o777).toBe(0o600);
    const doc = parse(readFileSync(config, "utf8"));
    expect(doc.master_secret).toMatch(/^[0-9a-f]{64}$/);
    for (const key of [
      "data_dir",
      "apps_dir",
      "listen_addr",
      "http_listen_addr",
      "management_port",
      "management_addr",
      "domain",
      "public_host",
      "tls",
      "audit_retention_days",
      "metrics",
      "ratelimit",
      "registries",
      "trusted_proxies",
      "git_sync",
    ]) {
      expect(doc).toHaveProperty(key);
    }
    expect(doc.tls.mode).toBe("local");
  });

  it("refuses to overwrite without --force, and makes a new secret with it", async () => {
    const before = readFileSync(config, "utf8");
    const r = await runCli(["init", "--config", config]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("exists; pass --force");
    expect(readFileSync(config, "utf8")).toBe(before);
    const other = join(tempDir(), "c.yaml");
    await runCli(["init", "--config", other]);
    const first = parse(readFileSync(other, "utf8")).master_secret;
    expect((await runCli(["init", "--config", other, "--force"])).code).toBe(0);
    expect(parse(readFileSync(other, "utf8")).master_secret).not.toBe(first);
  });

  it("selects ACME when given an email", async () => {
    const other = join(tempDir(), "c.yaml");
    expect((await runCli(["init", "--config", other, "--email", "ops@example.com", "--domain", "deploy.example.com"])).code).toBe(
      0,
    );
    const doc = parse(readFileSync(other, "utf8"));
    expect(doc.tls).toEqual({ mode: "auto", email: "ops@example.com" });
    expect(doc.domain).toBe("deploy.example.com");
  });
});

describe("sundeck serve", () => {
  it("runs the config init wrote, unchanged", async () => {
    const r = await new Client(server.url).get("/api/health");
    expect(r.status).toBe(200);
    expect(server.output()).toContain(`config=${config}`);
  });

  it("stops a bad config with one line naming the key and exit code 1", async () => {
    const bad = join(tempDir(), "bad.yaml");
    writeFileSync(bad, readFileSync(config, "utf8").replace(/window: 60s/, "window: sixty"));
    const r = await runCli(["serve", "--config", bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^sundeck: config: ratelimit\.window: must be a duration[^\n]*\n$/);
    const missing = await runCli(["serve", "--config", join(dir, "nope.yaml")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("file not found");
  });

  it("names the port when it cannot listen", async () => {
    const port = new URL(server.url).port;
    const r = await runCli(["serve", "--config", config], { env: { SUNDECK_MANAGEMENT_PORT: port } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(port);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("starts the embedded default with no config, ignoring a stray .env and bunfig.toml", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, ".env"), "SUNDECK_TLS_MODE=bogus\nSUNDECK_MANAGEMENT_PORT=1\n");
    writeFileSync(join(cwd, "bunfig.toml"), 'preload = ["./evil.ts"]\n');
    writeFileSync(join(cwd, "evil.ts"), `require("fs").writeFileSync(${JSON.stringify(join(cwd, "pwned"))}, "x");\n`);
    const b = await startBinary([], { env, cwd });
    try {
      const c = new Client(b.url);
      expect((await c.get("/api/setup/status")).json).toEqual({ needs_setup: true });
      expect(b.output()).toContain('config="embedded default"');
      expect(b.output()).toContain("tls_mode=off");
      const secret = join(cwd, "sundeck-data", "master_secret");
      expect(statSync(secret).mode & 0o777).toBe(0o600);
      expect(statSync(join(cwd, "sundeck-data", "sundeck.db")).mode & 0o777).toBe(0o600);
      expect(existsSync(join(cwd, "pwned"))).toBe(false);
    } finally {
      expect(await b.stop()).toBe(0);
    }
  });
});

describe("sundeck users", () => {
  it("creates users from a flag, SUNDECK_PASSWORD or stdin, and they can log in", async () => {
    expect(
      (await cli(["users", "create", "--username", "alice", "--password", "alice-password", "--role", "super_admin"])).stdout,
    ).toContain("created user alice (super_admin)");
    expect(
      (await cli(["users", "create", "--username", "bob", "--role", "viewer"], { env: { SUNDECK_PASSWORD: "bob-password" } }))
        .code,
    ).toBe(0);
    expect((await cli(["users", "create", "--username", "cy", "--role", "manage"], { stdin: "cy-password\n" })).code).toBe(0);
    for (const [u, p] of [
      ["alice", "alice-password"],
      ["bob", "bob-password"],
      ["cy", "cy-password"],
    ]) {
      expect((await new Client(server.url).post("/api/auth/login", { username: u, password: p })).status).toBe(200);
    }
  });

  it("fails with one line and exit 1 on bad input", async () => {
    const dup = await cli(["users", "create", "--username", "alice", "--password", "whatever-1", "--role", "viewer"]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toBe("sundeck: user alice already exists\n");
    const role = await cli(["users", "create", "--username", "dan", "--password", "whatever-1", "--role", "king"]);
    expect(role.code).toBe(1);
    expect(role.stderr).toBe("sundeck: role must be one of super_admin, admin, manage, viewer\n");
    const short = await cli(["users", "create", "--username", "dan", "--password", "short", "--role", "viewer"]);
    expect(short.stderr).toBe("sundeck: password must be at least 8 characters\n");
    const missing = await cli(["users", "create", "--password", "whatever-1", "--role", "viewer"]);
    expect(missing.code).toBe(2);
  });

  it("lists users as a table or JSON", async () => {
    const text = await cli(["users", "list"]);
    expect(text.stdout.split("\n")[0]).toMatch(/^ID\s+USERNAME\s+ROLE/);
    expect(text.stdout).toContain("alice");
    const json = JSON.parse((await cli(["users", "list", "--output", "json"])).stdout);
    expect(json.map((u: any) => u.username)).toEqual(["alice", "bob", "cy"]);
    expect(JSON.stringify(json)).not.toContain("password");
  });

  it("sets a password, ending the user's sessions", async () => {
    const c = new Client(server.url);
    await c.post("/api/auth/login", { username: "bob", password: "bob-password" });
    expect((await cli(["users", "passwd", "--username", "bob", "--password", "bob-new-password"])).code).toBe(0);
    expect((await c.get("/api/me")).status).toBe(401);
    expect((await new Client(server.url).post("/api/auth/login", { username: "bob", password: "bob-new-password" })).status).toBe(
      200,
    );
  });

  it("deletes users but never the last super-admin", async () => {
    expect((await cli(["users", "delete", "--username", "cy"])).stdout).toBe("deleted user cy\n");
    const last = await cli(["users", "delete", "--username", "alice"]);
    expect(last.code).toBe(1);
    expect(last.stderr).toBe("sundeck: the last super_admin cannot be removed or demoted\n");
    expect((await cli(["users", "delete", "--username", "nobody"])).stderr).toBe("sundeck: no user named nobody\n");
  });
});

describe("sundeck apikey", () => {
  it("creates a key that works against the running server, lists it without the key, and revokes it", async () => {
    const made = await cli(["apikey", "create", "--username", "alice", "--name", "ci", "--expires", "30d"]);
    expect(made.code).toBe(0);
    const key = made.stdout.trim();
    expect(key).toMatch(/^sd_[0-9a-f]{64}$/);
    const c = new Client(server.url, { bearer: key });
    expect((await c.get("/api/me")).json.username).toBe("alice");
    const list = JSON.parse((await cli(["apikey", "list", "--output", "json"])).stdout);
    const row = list.find((k: any) => k.name === "ci");
    expect(row.username).toBe("alice");
    expect(Date.parse(row.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(JSON.stringify(list)).not.toContain(key.slice(12));
    expect((await cli(["apikey", "revoke", "--id", String(row.id)])).code).toBe(0);
    expect((await c.get("/api/me")).status).toBe(401);
    expect((await cli(["apikey", "revoke", "--id", String(row.id)])).stderr).toBe(`sundeck: no API key with id ${row.id}\n`);
  });

  it("records CLI changes with actor source cli, named for the operating-system user who ran them", async () => {
    // the commands ran without $USER or $LOGNAME, as from a cron job or a bare service environment
    const osUser = Bun.spawnSync(["id", "-un"]).stdout.toString().trim();
    expect(osUser).not.toBe("");
    const c = new Client(server.url);
    await c.post("/api/auth/login", { username: "alice", password: "alice-password" });
    const entries = (await c.get("/api/activity?categories=system&limit=200")).json.entries;
    const created = entries.find((e: any) => e.action === "user_created" && e.target === "bob");
    expect(created).toMatchObject({ actor_source: "cli", actor_name: osUser, ip: null });
    expect(created.summary).toStartWith(`${osUser} created user bob`);
    const revoked = entries.find((e: any) => e.action === "apikey_revoked");
    expect(revoked).toMatchObject({ actor_source: "cli", actor_name: osUser });
  });
});

describe("sundeck itself", () => {
  it("prints its version and commit", async () => {
    const r = await runCli(["version"]);
    expect(r.stdout).toMatch(/^sundeck \d+\.\d+\.\d+ \(\S+\)\n$/);
    expect((await runCli(["--version"])).stdout).toBe(r.stdout);
  });

  it("prints help as plain text when stdout is not a terminal", async () => {
    for (const args of [["--help"], ["users", "--help"], ["apikey", "create", "--help"], []]) {
      const r = await runCli(args);
      expect(r.code).toBe(args.length ? 0 : 2);
      expect(r.stdout).toContain("USAGE");
      expect(r.stdout).not.toContain("\x1b[");
    }
  });

  it("exits 2 on an unknown command", async () => {
    const r = await runCli(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("sundeck: unknown command frobnicate (see sundeck --help)\n");
  });

  it("exits 0 on SIGTERM after a graceful stop", async () => {
    const b = await startBinary(["--config", config], { env });
    expect(await b.stop()).toBe(0);
    expect(b.output()).toContain("shutting down");
  });
});
