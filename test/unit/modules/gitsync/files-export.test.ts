/**
 * The export of git sync on a real server: the sidecar and _global.yml hold what the spec lists, the same bytes for
 * the same state, and never a secret (each one planted through the real services and looked for in every byte).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { globalOf, sidecarOf } from "../../../../src/modules/gitsync/files/export";
import { writeExport } from "../../../../src/modules/gitsync/files/write";
import { startTestServer, type TestServer } from "../../../helpers/server";
import { tempDir } from "../../../helpers/tmp";
import { plantState, seedAppDir } from "./files-fixture";

let s: TestServer;
let appsDir: string;
let planted: Awaited<ReturnType<typeof plantState>>;
beforeAll(async () => {
  s = await startTestServer();
  appsDir = tempDir();
  planted = await plantState(s.ctx, appsDir);
});
afterAll(() => s.stop());

/** Every file under `dir`, with its bytes. */
const allFiles = (dir: string, rel = ""): Array<[string, Buffer]> =>
  readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const p = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? allFiles(dir, p) : [[p, readFileSync(join(dir, p))] as [string, Buffer]];
  });

describe("sidecar", () => {
  it("holds the app's rules (webhooks by name), backup configs and access, sorted", () => {
    expect(parse(sidecarOf(s.ctx, "web"))).toEqual({
      version: 1,
      alert_rules: [
        {
          name: "cpu high",
          kind: "cpu",
          threshold: 80,
          duration: "1m",
          enabled: true,
          repeat_interval: null,
          silenced_until: null,
          webhooks: [],
        },
        {
          name: "mem high",
          kind: "memory",
          threshold: 90,
          duration: "5m",
          enabled: true,
          repeat_interval: null,
          silenced_until: null,
          webhooks: ["ops"],
        },
      ],
      backups: [
        {
          strategy: "volume",
          service: "app",
          target: {
            kind: "s3",
            endpoint: "https://s3.example.com",
            bucket: "backups",
            prefix: "web/",
            region: "us-east-1",
            access_key: "AKIAEXAMPLE",
            path_style: true,
          },
          schedule: null,
          timezone: null,
          retention_count: null,
          retention_days: null,
          pre_hooks: [],
          post_hooks: [],
          enabled: true,
        },
        {
          strategy: "postgres",
          service: "db",
          target: { kind: "local" },
          schedule: "0 3 * * *",
          timezone: null,
          retention_count: 7,
          retention_days: null,
          pre_hooks: [],
          post_hooks: [],
          enabled: true,
        },
      ],
      access: [
        { username: "alice", role: "manage" },
        { username: "bob", role: "viewer" },
      ],
    });
  });

  it("has sorted keys and the same bytes on every call", () => {
    const text = sidecarOf(s.ctx, "web");
    expect(sidecarOf(s.ctx, "web")).toBe(text);
    expect(text.split("\n").filter((l) => /^[a-z]/.test(l))).toEqual(["access:", "alert_rules:", "backups:", "version: 1"]);
  });
});

describe("_global.yml", () => {
  it("holds users with roles, registries without credentials, webhooks by origin, global rules", () => {
    const g = parse(globalOf(s.ctx));
    expect(g.users).toEqual([
      { username: "alice", role: "manage" },
      { username: "bob", role: "viewer" },
      { username: "root", role: "super_admin" },
    ]);
    expect(g.registries).toEqual([
      { name: "ghcr", url: "https://ghcr.io", username: "bot" },
      { name: "private", url: "https://registry.example.com:5000/v2", username: "bot" },
    ]);
    expect(g.webhooks).toEqual([
      { name: "ops", origin: "https://hooks.slack.com", kind: "slack", enabled: true },
      { name: "pager", origin: "https://pager.example.com", kind: "generic", enabled: true },
    ]);
    expect(g.alert_rules.map((r: any) => r.name)).toEqual(["disk low"]);
  });
});

describe("redaction", () => {
  it("writes no secret, hash, key, sealed value or mask in any exported byte", () => {
    const dir = tempDir();
    seedAppDir(s.ctx, dir, "api");
    mkdirSync(join(dir, "web"));
    writeFileSync(join(dir, "web", "docker-compose.yml"), "services: {}\n");
    writeExport(s.ctx, dir);
    const files = allFiles(dir);
    expect(files.map(([p]) => p).sort()).toEqual([
      ".gitignore",
      "_global.yml",
      "api/docker-compose.yml",
      "api/sundeck.yml",
      "web/docker-compose.yml",
      "web/sundeck.yml",
    ]);
    expect(planted.secrets.length).toBeGreaterThanOrEqual(10);
    for (const [path, bytes] of files) {
      const text = bytes.toString("latin1");
      for (const secret of [...planted.secrets, "********", "REGURLPASS", "SLACKSECRET", "$argon2", "sk_"]) {
        expect({ path, found: text.includes(secret) }).toEqual({ path, found: false });
      }
    }
  });
});

describe("writeExport", () => {
  it("writes only what changed, and nothing on a second run", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "web"));
    writeFileSync(join(dir, "web", "docker-compose.yml"), "services: {}\n");
    expect(writeExport(s.ctx, dir)).toEqual([".gitignore", "_global.yml", "web/sundeck.yml"]);
    const before = statSync(join(dir, "web", "sundeck.yml")).mtimeMs;
    expect(writeExport(s.ctx, dir)).toEqual([]);
    expect(statSync(join(dir, "web", "sundeck.yml")).mtimeMs).toBe(before);
    expect(readdirSync(join(dir, "web")).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("rewrites a file whose bytes differ and reports it", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "web"));
    writeFileSync(join(dir, "web", "docker-compose.yml"), "services: {}\n");
    writeExport(s.ctx, dir);
    writeFileSync(join(dir, "web", "sundeck.yml"), "edited\n");
    expect(writeExport(s.ctx, dir)).toEqual(["web/sundeck.yml"]);
    expect(readFileSync(join(dir, "web", "sundeck.yml"), "utf8")).toBe(sidecarOf(s.ctx, "web"));
  });

  it("removes the sidecar of an app whose directory lost its compose file, keeps one of an app not deployed yet", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "gone"));
    writeFileSync(join(dir, "gone", "sundeck.yml"), "old\n");
    mkdirSync(join(dir, "new-app"));
    writeFileSync(join(dir, "new-app", "docker-compose.yml"), "services: {}\n");
    writeFileSync(join(dir, "new-app", "sundeck.yml"), "from the remote\n");
    expect(writeExport(s.ctx, dir)).toEqual([".gitignore", "_global.yml", "gone/sundeck.yml"]);
    expect(existsSync(join(dir, "gone"))).toBe(false);
    expect(readFileSync(join(dir, "new-app", "sundeck.yml"), "utf8")).toBe("from the remote\n");
  });

  it("replaces a symlinked sidecar with a plain file and never writes through it", () => {
    const dir = tempDir();
    const outside = join(tempDir(), "victim");
    writeFileSync(outside, "untouched\n");
    mkdirSync(join(dir, "web"));
    writeFileSync(join(dir, "web", "docker-compose.yml"), "services: {}\n");
    symlinkSync(outside, join(dir, "web", "sundeck.yml"));
    symlinkSync(outside, join(dir, "_global.yml"));
    writeExport(s.ctx, dir);
    expect(readFileSync(outside, "utf8")).toBe("untouched\n");
    expect(lstatSync(join(dir, "web", "sundeck.yml")).isFile()).toBe(true);
    expect(lstatSync(join(dir, "_global.yml")).isFile()).toBe(true);
  });
});
