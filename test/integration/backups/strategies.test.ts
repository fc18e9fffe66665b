/**
 * Backup strategies round trip on the real engine with real databases in locally built images: write rows, dump to a
 * file (streamed), destroy the data, restore from the file, read the rows back. The volume strategy also runs on an
 * image with one static binary and no shell or tar.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DbImageKind, ensureDbImage } from "../../../scripts/test-db-images";
import type { Engine } from "../../../src/docker/types";
import { backupContainer, createStrategies } from "../../../src/modules/backups/strategies";
import type { AppStrategy } from "../../../src/modules/backups/strategies/run";
import type { BackupContainer } from "../../../src/modules/backups/types";
import { docker, dockerOk, ensureTestImages, removeByLabel, requireDocker, TEST_IMAGES, uniqueName } from "../../helpers/docker";
import { until } from "../../helpers/http";
import { tempDir } from "../../helpers/tmp";

const RUN = uniqueName("sdt-bk");
const LABEL = `io.sundeck.test=${RUN}`;
let engine: Engine;
let strategies: Record<string, AppStrategy>;
let dir: string;

beforeAll(async () => {
  engine = await requireDocker();
  await ensureTestImages();
  strategies = createStrategies({ engine });
  dir = tempDir("sundeck-strategies-");
});

afterAll(async () => {
  await removeByLabel(LABEL);
});

/** Start a container of a test image, labelled for cleanup; returns its id. */
async function run(kind: DbImageKind | "busybox", args: string[], cmd: string[] = []): Promise<string> {
  const image = kind === "busybox" ? TEST_IMAGES.busybox : await ensureDbImage(kind);
  return dockerOk("run", "-d", "--label", LABEL, ...args, image, ...cmd);
}

/** Run a command in a container through the engine; its stdout, or a thrown error with its stderr. */
async function sh(id: string, cmd: string[], env: string[] = []): Promise<string> {
  const p = await engine.exec(id, { cmd, env });
  const out = await new Response(p.stdout).text();
  const r = await p.result;
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} exited ${r.exitCode}: ${r.stderr}${out}`);
  return out;
}

/** `check` resolved without throwing, within `ms` (a deadline, not a sleep). */
function ready(what: string, check: () => Promise<unknown>, ms = 30_000) {
  return until(
    async () => {
      await check();
      return true;
    },
    { timeout: ms, every: 100, what },
  );
}

async function container(id: string): Promise<BackupContainer> {
  return backupContainer(await engine.inspect(id));
}

/** Dump through the strategy into a file, streamed; returns the file. */
async function dumpTo(s: AppStrategy, c: BackupContainer, name: string): Promise<string> {
  const file = join(dir, name);
  const seen: number[] = [];
  await Bun.write(file, new Response(await s.dump(c, { progress: (n) => seen.push(n) })));
  return file;
}

async function restoreFrom(s: AppStrategy, c: BackupContainer, file: string): Promise<void> {
  await s.restore(c, Bun.file(file).stream(), {});
}

describe("postgres", () => {
  let pg = "";

  it("dumps with pg_dump and brings dropped rows back with pg_restore", async () => {
    const id = await run("postgres", ["-e", "POSTGRES_PASSWORD=s3cret", "-e", "POSTGRES_USER=sd", "-e", "POSTGRES_DB=app"]);
    const psql = (sql: string) => sh(id, ["psql", "-U", "sd", "-d", "app", "-tAc", sql]);
    await ready("postgres", () => psql("select 1"));
    pg = id;
    await psql(
      "create table items(id int primary key, name text); insert into items select g, 'item ' || g from generate_series(1, 5000) g",
    );
    const c = await container(id);
    const s = strategies.postgres;
    expect(s.needsStop).toBe(false);
    const file = await dumpTo(s, c, "pg.pgdump");
    expect(readFileSync(file).subarray(0, 5).toString()).toBe("PGDMP");

    await psql("drop table items");
    await restoreFrom(s, c, file);
    expect((await psql("select count(*), max(name) from items where name like 'item %'")).trim()).toBe("5000|item 999");
  }, 120_000);

  it("fails the dump with pg_dump's message when the database is missing", async () => {
    const c = await container(pg);
    c.env = [...c.env.filter((e) => !e.startsWith("POSTGRES_DB=")), "POSTGRES_DB=nope"];
    const err = await new Response(await strategies.postgres.dump(c, {})).arrayBuffer().catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String(err.message)).toMatch(/pg_dump exited with 1.*nope/);
  }, 120_000);
});

describe("mysql", () => {
  it("dumps with mariadb-dump --single-transaction and restores by piping into mariadb", async () => {
    const id = await run("mariadb", ["-e", "MARIADB_ROOT_PASSWORD=s3cret", "-e", "MARIADB_DATABASE=app"]);
    const sql = (q: string) => sh(id, ["mariadb", "-uroot", "-N", "-e", q], ["MYSQL_PWD=s3cret"]);
    await ready("mariadb", () => sql("select 1"));
    await sql(
      "use app; create table items(id int primary key, name varchar(40)); insert into items select seq, concat('item ', seq) from seq_1_to_3000",
    );
    const c = await container(id);
    const file = await dumpTo(strategies.mysql, c, "my.sql");
    expect(readFileSync(file, "utf8")).toContain("CREATE TABLE `items`");

    await sql("drop database app");
    await restoreFrom(strategies.mysql, c, file);
    expect((await sql("select count(*), max(id) from app.items")).trim()).toBe("3000\t3000");
  }, 120_000);
  it("dumps the one database of MYSQL_USER when no root password is in the environment", async () => {
    const id = await run("mariadb", ["-e", "MYSQL_USER=app", "-e", "MYSQL_PASSWORD=apppw", "-e", "MYSQL_DATABASE=shop"]);
    const sql = (q: string) => sh(id, ["mariadb", "-uapp", "-N", "shop", "-e", q], ["MYSQL_PWD=apppw"]);
    await ready("mariadb", () => sql("select 1"));
    await sql("create table orders(id int primary key); insert into orders values (1), (2), (3)");
    const c = await container(id);
    const file = await dumpTo(strategies.mysql, c, "shop.sql");
    const text = readFileSync(file, "utf8");
    expect(text).toContain("CREATE DATABASE");
    expect(text).not.toContain("`mysql`");

    await sql("drop table orders");
    await restoreFrom(strategies.mysql, c, file);
    expect((await sql("select count(*) from orders")).trim()).toBe("3");
  }, 120_000);
});

describe("redis", () => {
  it("streams a fresh RDB and loads it back while the service is stopped", async () => {
    const id = await run("redis", []);
    const cli = (...args: string[]) => sh(id, ["redis-cli", ...args]);
    await ready("redis", () => cli("ping"));
    await sh(id, ["sh", "-c", 'for i in $(seq 0 199); do echo "SET key:$i \\"value $i\\""; done | redis-cli']);
    const c = await container(id);
    const s = strategies.redis;
    expect(s.needsStop).toBe(true);
    const file = await dumpTo(s, c, "dump.rdb");
    const rdb = readFileSync(file);
    expect(rdb.subarray(0, 5).toString()).toBe("REDIS");
    expect(rdb[rdb.length - 9]).toBe(0xff);

    await cli("flushall");
    // a running redis would write its own dataset over the file at shutdown: refused
    expect(await restoreFrom(s, c, file).catch((e) => e.message)).toMatch(/needs the service stopped/);
    await dockerOk("stop", "-t", "5", id);
    await restoreFrom(s, c, file);
    await dockerOk("start", id);
    await ready("redis", () => cli("ping"));
    expect((await cli("dbsize")).trim()).toBe("200");
    expect((await cli("get", "key:7")).trim()).toBe("value 7");
  }, 120_000);
});

describe("sqlite", () => {
  it("copies through SQLite's backup and restores the file with its owner", async () => {
    const vol = `${RUN}-sqlite`;
    await dockerOk("volume", "create", "--label", LABEL, vol);
    const id = await run("sqlite", ["-v", `${vol}:/data`, "--label", "sundeck.backup.path=/data/app.db"]);
    const q = (sql: string) => sh(id, ["sqlite3", "/data/app.db", sql]);
    await q("pragma journal_mode=wal; create table t(id integer primary key, v text);");
    await q(
      "with recursive n(i) as (select 1 union all select i+1 from n where i < 2000) insert into t select i, 'row ' || i from n;",
    );
    await sh(id, ["chown", "1234:1234", "/data/app.db"]);
    const c = await container(id);
    const s = strategies.sqlite;
    const file = await dumpTo(s, c, "app.sqlite");
    expect(readFileSync(file).subarray(0, 15).toString()).toBe("SQLite format 3");
    expect(await sh(id, ["ls", "/tmp"])).toBe("");

    await q("delete from t");
    await dockerOk("stop", "-t", "5", id);
    await restoreFrom(s, c, file);
    await dockerOk("start", id);
    expect((await q("select count(*), max(v) from t")).trim()).toBe("2000|row 999");
    expect((await sh(id, ["stat", "-c", "%u:%g", "/data/app.db"])).trim()).toBe("1234:1234");
  }, 120_000);

  it("asks for the path label instead of guessing", async () => {
    const id = await run("sqlite", []);
    const err = await strategies.sqlite.dump(await container(id), {}).catch((e) => e);
    expect(err.message).toMatch(/sundeck\.backup\.path/);
  }, 60_000);
});

describe("volume", () => {
  it("tars named volumes and bind mounts under a directory each, and restores them", async () => {
    const vol = `${RUN}-vol`;
    const bind = join(dir, "bind");
    mkdirSync(bind);
    writeFileSync(join(bind, "config.txt"), "from the host\n");
    await dockerOk("volume", "create", "--label", LABEL, vol);
    const id = await run("busybox", ["-v", `${vol}:/var/lib/data`, "-v", `${bind}:/cfg`], ["sleep", "100000"]);
    const long = `${"d".repeat(60)}/${"f".repeat(80)}.txt`;
    await sh(id, [
      "sh",
      "-c",
      `mkdir -p /var/lib/data/sub/${"d".repeat(60)} && echo one > /var/lib/data/one.txt && echo deep > /var/lib/data/sub/${long} && head -c 300000 /dev/urandom > /var/lib/data/blob && ln -s one.txt /var/lib/data/link`,
    ]);
    const sum = async () => sh(id, ["sh", "-c", "cd /var/lib/data && md5sum one.txt blob sub/*/* && readlink link"]);
    const before = await sum();
    const c = await container(id);
    const s = strategies.volume;
    const file = await dumpTo(s, c, "vol.tar");
    // a real tar reads it: one top-level directory per mount
    const list = Bun.spawnSync(["tar", "-tf", file]).stdout.toString().split("\n").filter(Boolean);
    expect(list).toContain("cfg/config.txt");
    expect(list).toContain("var_lib_data/one.txt");
    expect(list).toContain(`var_lib_data/sub/${long}`);

    await sh(id, ["sh", "-c", "rm -rf /var/lib/data/* /cfg/config.txt"]);
    await dockerOk("stop", "-t", "1", id);
    await restoreFrom(s, c, file);
    await dockerOk("start", id);
    expect(await sum()).toBe(before);
    expect(readFileSync(join(bind, "config.txt"), "utf8")).toBe("from the host\n");
  }, 120_000);

  it("copies a mount inside another mount once, under its own directory", async () => {
    const outer = `${RUN}-outer`;
    const inner = `${RUN}-inner`;
    for (const v of [outer, inner]) await dockerOk("volume", "create", "--label", LABEL, v);
    const id = await run("busybox", ["-v", `${outer}:/srv`, "-v", `${inner}:/srv/cache`], ["sleep", "100000"]);
    await sh(id, ["sh", "-c", "echo top > /srv/top.txt && echo cached > /srv/cache/c.txt"]);
    const file = await dumpTo(strategies.volume, await container(id), "nested.tar");
    const list = Bun.spawnSync(["tar", "-tf", file]).stdout.toString().split("\n").filter(Boolean);
    expect(list.filter((n) => n.endsWith("c.txt"))).toEqual(["srv_cache/c.txt"]);
    expect(list).toContain("srv/top.txt");
  }, 60_000);

  it("backs up and restores an image with no shell and no tar", async () => {
    const vol = `${RUN}-distroless`;
    await dockerOk("volume", "create", "--label", LABEL, vol);
    // a helper writes into the volume; the app container has one static binary and nothing else
    const helper = await run("busybox", ["-v", `${vol}:/data`], ["sleep", "100000"]);
    await sh(helper, ["sh", "-c", "echo precious > /data/a.txt && mkdir /data/d && echo more > /data/d/b.txt"]);
    const id = await run("distroless", ["-v", `${vol}:/data`]);
    expect((await docker("exec", id, "sh", "-c", "true")).code).not.toBe(0);
    const c = await container(id);
    const file = await dumpTo(strategies.volume, c, "distroless.tar");
    expect(statSync(file).size).toBeGreaterThan(1024);

    await sh(helper, ["sh", "-c", "rm -rf /data/*"]);
    await dockerOk("stop", "-t", "1", id);
    await restoreFrom(strategies.volume, c, file);
    expect((await sh(helper, ["sh", "-c", "cat /data/a.txt /data/d/b.txt"])).trim()).toBe("precious\nmore");
  }, 120_000);

  it("refuses an archive directory that no mount of the service matches", async () => {
    const id = await run("busybox", ["-v", `${join(dir, "other")}:/other`], ["true"]);
    await until(async () => !(await engine.inspect(id)).State.Running, { timeout: 10_000, what: "the container to exit" });
    mkdirSync(join(dir, "stranger"));
    writeFileSync(join(dir, "stranger/x.txt"), "x");
    const file = join(dir, "stranger.tar");
    expect(Bun.spawnSync(["tar", "-C", dir, "-cf", file, "stranger"]).exitCode).toBe(0);
    const err = await restoreFrom(strategies.volume, await container(id), file).catch((e) => e);
    expect(err.message).toMatch(/matches no mount/);
  }, 60_000);
});
