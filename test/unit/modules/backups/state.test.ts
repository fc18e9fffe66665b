/**
 * Sundeck's own state as a backup source: a snapshot of the real database file made while writers go on holds
 * exactly what was committed when it began, it streams without leaving a file behind (read to the end or cancelled),
 * leftovers of a killed snapshot are swept, a cancelled snapshot stops, and the worker's connection is closed every
 * time (none left open, holding the WAL, by a snapshot's end).
 */
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Db, openDb } from "../../../../src/db";
import { LogSink } from "../../../../src/log/logger";
import { createStateSource, snapshotDatabase, snapshotDir } from "../../../../src/modules/backups/state";
import { tempDir } from "../../../helpers/tmp";

const log = new LogSink({ stdout: false }).logger("test");
const open: Db[] = [];
afterEach(() => {
  for (const d of open.splice(0)) d.close();
});

function freshDb(): { db: Db; dataDir: string } {
  const dataDir = tempDir();
  const db = openDb(join(dataDir, "sundeck.db"));
  open.push(db);
  db.sqlite.run("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  return { db, dataDir };
}

async function drain(s: ReadableStream<Uint8Array>, into: string): Promise<number> {
  const w = Bun.file(into).writer();
  let n = 0;
  for await (const chunk of s as unknown as AsyncIterable<Uint8Array>) {
    w.write(chunk);
    n += chunk.byteLength;
  }
  await w.end();
  return n;
}

describe("state snapshot source", () => {
  it("closes the worker's connection before the snapshot ends, every time", async () => {
    const { db, dataDir } = freshDb();
    // descriptors of this process (worker threads included) open on the database's files
    const held = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(join("/proc/self/fd", fd)).startsWith(db.path);
        } catch {
          return false;
        }
      }).length;
    await snapshotDatabase(db, join(dataDir, "first.sqlite"));
    const afterOne = held();
    // a connection closed after the worker answered could be cut by its termination and stay open for good
    for (let i = 0; i < 60; i++) await snapshotDatabase(db, join(dataDir, `s${i}.sqlite`));
    expect(held()).toBe(afterOne);
  }, 60_000);

  it("names itself state with the .sqlite.gz extension", () => {
    const { db, dataDir } = freshDb();
    const src = createStateSource({ db, dataDir, log });
    expect([src.strategy, src.extension]).toEqual(["state", ".sqlite.gz"]);
  });

  it("streams a consistent copy of the database, 0600 while it exists, and leaves nothing behind", async () => {
    const { db, dataDir } = freshDb();
    const ins = db.sqlite.prepare("INSERT INTO notes (body) VALUES (?)");
    db.tx(() => {
      for (let i = 0; i < 20_000; i++) ins.run(`note ${i} ${"x".repeat(40)}`);
    });
    const modes: number[] = [];
    const dir = snapshotDir(dataDir);
    // writers go on while the worker copies; each commit is in the copy or not, never half of one
    let writing = true;
    const writer = (async () => {
      let i = 0;
      while (writing) {
        db.tx(() => {
          ins.run(`late ${i}`);
          ins.run(`late ${i} pair`);
        });
        i++;
        // a file may go between listing and stat (the snapshot is unlinked once open)
        if (existsSync(dir))
          for (const n of readdirSync(dir)) {
            const st = statSync(join(dir, n), { throwIfNoEntry: false });
            if (st) modes.push(st.mode & 0o777);
          }
        // yield so the snapshot's worker can answer
        await new Promise((r) => setImmediate(r));
      }
      return i;
    })();
    const stream = await createStateSource({ db, dataDir, log }).open({});
    writing = false;
    const wrote = await writer;
    expect(wrote).toBeGreaterThan(0);
    const out = join(tempDir(), "copy.sqlite");
    expect(await drain(stream, out)).toBeGreaterThan(1_000_000);
    expect(readdirSync(dir)).toEqual([]);
    expect(new Set(modes)).toEqual(new Set(modes.length ? [0o600] : []));

    const copy = new Database(out, { readonly: true });
    const count = (sql: string) => (copy.query(sql).get() as { n: number }).n;
    expect(copy.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(count("SELECT count(*) AS n FROM notes WHERE body LIKE 'note %'")).toBe(20_000);
    // pairs are whole: as many "late i" as "late i pair"
    expect(count("SELECT count(*) AS n FROM notes WHERE body LIKE 'late % pair'") * 2).toBe(
      count("SELECT count(*) AS n FROM notes WHERE body LIKE 'late %'"),
    );
    expect(count("SELECT count(*) AS n FROM notes WHERE body LIKE 'late % pair'")).toBeLessThanOrEqual(wrote);
    expect(count("SELECT count(*) AS n FROM schema_migrations")).toBeGreaterThan(0);
    copy.close();
  });

  it("leaves nothing behind when the reader cancels half way", async () => {
    const { db, dataDir } = freshDb();
    db.tx(() => {
      for (let i = 0; i < 5000; i++) db.sqlite.run("INSERT INTO notes (body) VALUES (?)", [`n${i}`.repeat(20)]);
    });
    const stream = await createStateSource({ db, dataDir, log }).open({});
    const reader = stream.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    expect(readdirSync(snapshotDir(dataDir))).toEqual([]);
  });

  it("sweeps the file of a snapshot a killed process left, and keeps other files", async () => {
    const { db, dataDir } = freshDb();
    const dir = snapshotDir(dataDir);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "state-snapshot-deadbeef.sqlite"), "half a database");
    writeFileSync(join(dir, "upload-1.tmp"), "someone else's");
    const stream = await createStateSource({ db, dataDir, log }).open({});
    await stream.cancel();
    expect(readdirSync(dir)).toEqual(["upload-1.tmp"]);
  });

  it("stops when cancelled before the copy ends, and removes its file", async () => {
    const { db, dataDir } = freshDb();
    const ctl = new AbortController();
    ctl.abort(new Error("server stopping"));
    await expect(createStateSource({ db, dataDir, log }).open({ signal: ctl.signal })).rejects.toThrow("server stopping");
    expect(readdirSync(snapshotDir(dataDir))).toEqual([]);
  });

  it("copies an in-memory database (tests) on its own connection", async () => {
    const db = openDb(":memory:");
    open.push(db);
    const dest = join(tempDir(), "mem.sqlite");
    await snapshotDatabase(db, dest);
    const copy = new Database(dest, { readonly: true });
    expect((copy.query("SELECT count(*) AS n FROM schema_migrations").get() as { n: number }).n).toBeGreaterThan(0);
    copy.close();
    expect(statSync(dest).mode & 0o777).toBe(0o600);
  });
});
