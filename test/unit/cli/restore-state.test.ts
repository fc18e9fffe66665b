/**
 * `sundeck restore-state` on a real database: rows written, a snapshot taken by the state source, rows changed, the
 * snapshot restored (from a .sqlite.gz, a plain .sqlite, or a stored run checked against its sha256), the rows back
 * and the previous database kept beside it. Refusals leave the database as it was and no temp file: not SQLite, a
 * foreign SQLite, one of a newer Sundeck, a corrupt gzip, a server answering on the management port, and the
 * database open in another process.
 */
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, it } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import { describeRestore, restoreState } from "../../../src/cli/restore-state";
import type { Config } from "../../../src/config/schema";
import { type Ctx, createContext, dbPathOf } from "../../../src/context";
import { LogSink } from "../../../src/log/logger";
import { createStateSource } from "../../../src/modules/backups/state";
import { createLocalTarget } from "../../../src/modules/backups/targets";
import { startTestServer, testConfig } from "../../helpers/server";
import { tempDir } from "../../helpers/tmp";

const ROOT = resolve(import.meta.dir, "../../..");
const actor = { userId: null, name: "test", source: "cli" as const, ip: null };
const PW = "correct-horse-battery";
const NOW = Date.parse("2026-11-27T03:15:00Z");

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const quiet = () => new LogSink({ stdout: false });

function open(config: Config): Ctx {
  const ctx = createContext(config, { logs: quiet() });
  cleanups.push(() => ctx.db.close());
  return ctx;
}

/**
 * Close the database as a stopped server's exit does: a plain close() of bun:sqlite is deferred until its statements
 * are collected, and until then the connection still holds the WAL (and counts as another user of the database).
 */
function stop(ctx: Ctx): void {
  ctx.db.sqlite.close(true);
  expect(existsSync(`${ctx.db.path}-wal`)).toBe(false);
}

const usernames = (ctx: Ctx) =>
  ctx.users
    .list()
    .map((u) => u.username)
    .sort();

/** A snapshot of the live database as the runner stores it: the state source's stream, gzipped. */
async function snapshot(ctx: Ctx, gzip = true): Promise<string> {
  const raw = await createStateSource({ db: ctx.db, dataDir: ctx.config.data_dir, log: ctx.log }).open({});
  const data = gzip ? raw.pipeThrough(new CompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>) : raw;
  const path = join(tempDir(), gzip ? "state.sqlite.gz" : "state.sqlite");
  await Bun.write(path, new Response(data));
  return path;
}

/** A server's database with two users, and a snapshot of it taken, then changed: alice gone, mallory added. */
async function changedAfterSnapshot(gzip = true) {
  const config = testConfig();
  const ctx = open(config);
  await ctx.users.create({ username: "alice", password: PW, role: "admin" }, actor);
  await ctx.users.create({ username: "bob", password: PW, role: "super_admin" }, actor);
  const file = await snapshot(ctx, gzip);
  ctx.users.delete(ctx.userRepo.byUsername("alice")!.id, actor);
  await ctx.users.create({ username: "mallory", password: PW, role: "viewer" }, actor);
  return { config, ctx, file };
}

/** The data dir's files other than the database, its kept copies and subdirectories. */
const leftovers = (config: Config) =>
  readdirSync(config.data_dir).filter((n) => n.includes(".tmp") || n.endsWith("-wal") || n.endsWith("-shm"));

describe("sundeck restore-state", () => {
  it("brings the rows of a .sqlite.gz snapshot back and keeps the previous database beside it", async () => {
    const { config, ctx, file } = await changedAfterSnapshot();
    expect(usernames(ctx)).toEqual(["bob", "mallory"]);
    stop(ctx);

    const r = await restoreState(config, { file }, NOW);
    const dbPath = dbPathOf(config);
    expect(r.kept).toBe(`${dbPath}.before-restore-20261127T031500Z`);
    expect(r.pending).toEqual([]);
    expect(describeRestore(r)).toContain(`the previous database is kept as ${r.kept}`);
    expect(statSync(dbPath).mode & 0o777).toBe(0o600);
    expect(leftovers(config)).toEqual([]);

    expect(usernames(open(config))).toEqual(["alice", "bob"]);
    const kept = new Database(r.kept!, { readonly: true });
    expect(kept.query("SELECT username FROM users ORDER BY username").all()).toEqual([
      { username: "bob" },
      { username: "mallory" },
    ]);
    kept.close();
  });

  it("takes a plain .sqlite file too, and restores onto a data dir with no database yet", async () => {
    const { ctx, file } = await changedAfterSnapshot(false);
    stop(ctx);
    const fresh = testConfig();
    const r = await restoreState(fresh, { file }, NOW);
    expect(r.kept).toBeNull();
    expect(usernames(open(fresh))).toEqual(["alice", "bob"]);
  });

  it("restores a stored run of a state config, checking the archive against the run's sha256", async () => {
    const config = testConfig();
    const ctx = open(config);
    await ctx.users.create({ username: "alice", password: PW, role: "super_admin" }, actor);
    const target = createLocalTarget({ dir: join(config.data_dir, "backups") });
    const raw = await createStateSource({ db: ctx.db, dataDir: config.data_dir, log: ctx.log }).open({});
    const key = "_sundeck/state-2026-11-27T03-00-00-000Z-r1.sqlite.gz";
    const stored = await target.put(key, raw.pipeThrough(new CompressionStream("gzip") as any), {});
    const insertRun = (sha: string) =>
      ctx.db.sqlite
        .query(
          `INSERT INTO backup_runs (strategy, target_kind, target_json, location, status, trigger, size_bytes, sha256, started_at, finished_at)
           VALUES ('state', 'local', '{}', ?, 'succeeded', 'manual', ?, ?, '2026-11-27T03:00:00Z', '2026-11-27T03:00:01Z') RETURNING id`,
        )
        .get(key, stored.sizeBytes, sha) as { id: number };
    const good = insertRun(stored.sha256).id;
    const tampered = insertRun("0".repeat(64)).id;
    await ctx.users.create({ username: "mallory", password: PW, role: "admin" }, actor);
    stop(ctx);

    await expect(restoreState(config, { runId: tampered }, NOW)).rejects.toThrow(
      /sha256 is [0-9a-f]{64}, the run recorded 0{64}/,
    );
    expect(leftovers(config)).toEqual([]);
    await expect(restoreState(config, { runId: 999 }, NOW)).rejects.toThrow("no backup run 999");

    const r = await restoreState(config, { runId: good }, NOW);
    expect(r.from).toBe(`run ${good} (local ${key})`);
    expect(usernames(open(config))).toEqual(["alice"]);
  });

  it("settles backup runs the snapshot caught in progress, so the server's recovery deletes none of their archives", async () => {
    const config = testConfig();
    const ctx = open(config);
    await ctx.users.create({ username: "alice", password: PW, role: "super_admin" }, actor);
    const target = createLocalTarget({ dir: join(config.data_dir, "backups") });
    const key = "web/db/postgres-2026-11-27T03-00-00-000Z-r1.pgdump.gz";
    await target.put(key, new Response("a dump finished after the snapshot").body!, {});
    ctx.db.sqlite.run(
      `INSERT INTO backup_runs (app_slug, strategy, service, target_kind, target_json, location, status, trigger, started_at)
       VALUES ('web', 'postgres', 'db', 'local', '{}', ?, 'running', 'schedule', '2026-11-27T03:00:00Z')`,
      [key],
    );
    const file = await snapshot(ctx);
    stop(ctx);

    const r = await restoreState(config, { file }, NOW);
    expect(r.settled).toBe(1);
    expect(describeRestore(r)).toContain(
      "1 backup runs in progress when the snapshot was taken were settled (their archives stay)",
    );
    const after = open(config);
    await after.backups.recover();
    expect(after.db.sqlite.query("SELECT status, location, error FROM backup_runs").all()).toEqual([
      { status: "failed", location: null, error: "in progress when the restored state snapshot was taken" },
    ]);
    expect(existsSync(join(config.data_dir, "backups", key))).toBe(true);
  });

  describe("refuses, leaving the database as it was", () => {
    async function refused(make: (dir: string) => string | Promise<string>, reason: string | RegExp) {
      const { config, ctx } = await changedAfterSnapshot();
      stop(ctx);
      const before = readFileSync(dbPathOf(config));
      const file = await make(tempDir());
      await expect(restoreState(config, { file }, NOW)).rejects.toThrow(reason);
      expect(readFileSync(dbPathOf(config)).equals(before)).toBe(true);
      expect(readdirSync(config.data_dir).filter((n) => n.startsWith("sundeck.db."))).toEqual([]);
      expect(leftovers(config)).toEqual([]);
    }

    it("a file that is not SQLite", () =>
      refused((d) => {
        writeFileSync(join(d, "notes.txt"), "dear diary ".repeat(100));
        return join(d, "notes.txt");
      }, "not a SQLite database"));

    it("a gzip that is not SQLite inside", () =>
      refused((d) => {
        writeFileSync(join(d, "x.sqlite.gz"), Bun.gzipSync(new TextEncoder().encode("hello")));
        return join(d, "x.sqlite.gz");
      }, "not a SQLite database"));

    it("a corrupt gzip", () =>
      refused((d) => {
        const gz = Bun.gzipSync(new Uint8Array(100_000));
        writeFileSync(join(d, "x.sqlite.gz"), gz.subarray(0, 40));
        return join(d, "x.sqlite.gz");
      }, /cannot unpack the snapshot/));

    it("a SQLite database of something else", () =>
      refused((d) => {
        const db = new Database(join(d, "other.sqlite"));
        db.run("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)");
        db.close();
        return join(d, "other.sqlite");
      }, "not a Sundeck database (no schema_migrations table)"));

    it("a Sundeck database made by a newer version", () =>
      refused(async () => {
        const { ctx } = await changedAfterSnapshot();
        ctx.db.sqlite.run("INSERT INTO schema_migrations (tag, applied_at) VALUES ('9999_future', '2030-01-01')");
        return snapshot(ctx);
      }, "the database has migrations this sundeck does not know (9999_future): a newer version made it"));

    it("a damaged database (integrity check)", () =>
      refused(async (d) => {
        const { ctx } = await changedAfterSnapshot();
        const file = await snapshot(ctx, false);
        const bytes = readFileSync(file);
        // scribble over the middle pages, keep the header
        bytes.fill(0x5a, 8192, Math.min(bytes.length, 8192 * 4));
        writeFileSync(join(d, "bad.sqlite"), bytes);
        return join(d, "bad.sqlite");
      }, /integrity check|not a readable SQLite database|malformed/));

    it("while a server answers on the management port", async () => {
      const server = await startTestServer();
      cleanups.push(() => server.stop());
      const { config, ctx, file } = await changedAfterSnapshot();
      stop(ctx);
      const running = { ...config, management_port: server.server.port };
      await expect(restoreState(running, { file }, NOW)).rejects.toThrow(
        `a server answers on http://127.0.0.1:${server.server.port}: stop it before restoring its state`,
      );
      expect(usernames(open(config))).toEqual(["bob", "mallory"]);
    });

    it("while another process has the database open", async () => {
      const { config, ctx, file } = await changedAfterSnapshot();
      stop(ctx);
      const holder = Bun.spawn(
        [
          process.execPath,
          "-e",
          `const { openDb } = await import(${JSON.stringify(join(ROOT, "src/db/index.ts"))});
           const db = openDb(${JSON.stringify(dbPathOf(config))});
           db.sqlite.query("SELECT count(*) FROM users").get();
           console.log("ready");
           for await (const _ of Bun.stdin.stream()) {}`,
        ],
        { stdin: "pipe", stdout: "pipe", stderr: "inherit" },
      );
      cleanups.push(() => {
        holder.kill();
        return holder.exited;
      });
      const reader = holder.stdout.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain("ready");

      await expect(restoreState(config, { file }, NOW)).rejects.toThrow(
        `${dbPathOf(config)} is open in another process (is the server running?): stop it first`,
      );
      expect(leftovers(config).filter((n) => n.includes(".tmp"))).toEqual([]);
      expect(existsSync(`${dbPathOf(config)}.before-restore-20261127T031500Z`)).toBe(false);
    });
  });

  it("runs as a command: one line on stderr and exit 1 when refused, exit 2 without --file or --run", async () => {
    const { config, ctx } = await changedAfterSnapshot();
    stop(ctx);
    const cfgFile = join(tempDir(), "config.yaml");
    writeFileSync(cfgFile, stringify(config));
    const notes = join(tempDir(), "notes.txt");
    writeFileSync(notes, "not a database");
    const run = async (...args: string[]) => {
      const p = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "restore-state", "--config", cfgFile, ...args], {
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      return { stdout, stderr, code };
    };
    expect(await run("--file", notes)).toEqual({
      stdout: "",
      stderr: `sundeck: cannot restore from ${notes}: not a SQLite database\n`,
      code: 1,
    });
    const none = await run();
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("give either --file or --run");
  });
});
