/**
 * Bringing Sundeck's database back from a state snapshot (`sundeck restore-state`): the candidate is unpacked next to
 * the live database, vetted (a SQLite file whose integrity check passes, with Sundeck's migrations table, whose
 * migrations are a prefix of this build's), then swapped in by rename, the previous database kept beside it under
 * `sundeck.db.before-restore-<time>`. It refuses while another process has the database open: replacing the file
 * under a running server would lose whatever it writes next, or worse.
 */
import { Database } from "bun:sqlite";
import { closeSync, existsSync, fsyncSync, linkSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { MIGRATIONS, type Migration } from "../../db/migrations";
import { randomHex } from "../../lib/crypto";
import { ensurePrivateDir } from "../../lib/fs";

/** A refusal: the candidate is not a usable snapshot, or the database cannot be replaced now. */
export class StateRestoreError extends Error {}

/** What a vetted snapshot holds. */
export interface StateFileInfo {
  /** Migrations recorded in the snapshot (all of them known to this build, in order). */
  migrations: string[];
  /** This build's migrations the snapshot lacks: the server applies them when it starts. */
  pending: string[];
}

const SQLITE_MAGIC = "SQLite format 3\0";

function header(path: string, n: number): Buffer {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(n);
    const got = readSync(fd, buf, 0, n, 0);
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** Whether the file starts like a gzip stream. */
export function isGzip(path: string): boolean {
  const h = header(path, 2);
  return h.length === 2 && h[0] === 0x1f && h[1] === 0x8b;
}

/** Check `path` is a sound SQLite database of Sundeck that this build can run; throws StateRestoreError naming why not. */
export function checkStateFile(path: string, migrations: readonly Migration[] = MIGRATIONS): StateFileInfo {
  if (header(path, 16).toString("latin1") !== SQLITE_MAGIC) throw new StateRestoreError("not a SQLite database");
  let db: Database;
  try {
    db = new Database(path, { readwrite: true, create: false });
  } catch (e) {
    throw new StateRestoreError(`cannot open the database: ${(e as Error).message}`);
  }
  try {
    let problems: string[];
    try {
      problems = db
        .query<{ integrity_check: string }, []>("PRAGMA integrity_check")
        .all()
        .map((r) => r.integrity_check);
    } catch (e) {
      throw new StateRestoreError(`not a readable SQLite database: ${(e as Error).message}`);
    }
    if (problems.length !== 1 || problems[0] !== "ok") {
      throw new StateRestoreError(`the database fails its integrity check: ${problems.slice(0, 3).join("; ")}`);
    }
    const hasTable = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    if (!hasTable) throw new StateRestoreError("not a Sundeck database (no schema_migrations table)");
    const tags = new Set(
      db
        .query<{ tag: string }, []>("SELECT tag FROM schema_migrations")
        .all()
        .map((r) => r.tag),
    );
    const ours = migrations.map((m) => m.tag);
    const unknown = [...tags].filter((t) => !ours.includes(t)).sort();
    if (unknown.length) {
      throw new StateRestoreError(
        `the database has migrations this sundeck does not know (${unknown.join(", ")}): a newer version made it`,
      );
    }
    const k = tags.size;
    const gap = ours.slice(0, k).find((t) => !tags.has(t));
    if (gap) throw new StateRestoreError(`the database's migrations are not in order: ${gap} is missing`);
    if (k === 0) throw new StateRestoreError("not a Sundeck database (no migrations applied)");
    return { migrations: ours.slice(0, k), pending: ours.slice(k) };
  } finally {
    // close(true) closes now; a plain close() waits for the statements to be collected
    db.close(true);
  }
}

/** What the current database knows of the run a snapshot is restored from (`--run`). */
export interface KnownRun {
  id: number;
  location: string;
  sizeBytes: number | null;
  sha256: string | null;
  finishedAt: string | null;
}

/**
 * Settle the backup runs a snapshot caught in progress (the state run that made it always is one). Left `running`,
 * the server's recovery at start would mark them failed and delete their objects: the very archive being restored,
 * or a good one finished after the snapshot. The run restored from takes its outcome from the current database; the
 * others become failed runs that claim no object (their archives, if any, stay where they are). Returns how many
 * were settled.
 */
export function settleRuns(path: string, known: KnownRun | null, nowIso: string): number {
  const db = new Database(path, { readwrite: true, create: false });
  try {
    const has = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'backup_runs'").get();
    if (!has) return 0;
    let n = 0;
    if (known) {
      n += db
        .query(
          `UPDATE backup_runs SET status = 'succeeded', location = ?, size_bytes = ?, sha256 = ?, finished_at = ?, error = NULL
           WHERE id = ? AND status = 'running'`,
        )
        .run(known.location, known.sizeBytes, known.sha256, known.finishedAt ?? nowIso, known.id).changes;
    }
    n += db
      .query(
        `UPDATE backup_runs SET status = 'failed', location = NULL, size_bytes = NULL, sha256 = NULL,
           finished_at = COALESCE(finished_at, ?), error = 'in progress when the restored state snapshot was taken'
         WHERE status = 'running'`,
      )
      .run(nowIso).changes;
    return n;
  } finally {
    db.close(true);
  }
}

/**
 * Copy a snapshot (gzip or plain SQLite) to a new 0600 temp file beside `dbPath`, at most `maxBytes` once
 * unpacked. Returns the temp path; the caller renames or removes it.
 */
export async function unpackBeside(
  dbPath: string,
  data: ReadableStream<Uint8Array>,
  gzip: boolean,
  maxBytes: number,
): Promise<string> {
  // a new host's data dir may not exist yet: restoring there is how a server moves
  ensurePrivateDir(dirname(dbPath));
  const tmp = join(dirname(dbPath), `.${basename(dbPath)}.restore-${randomHex(6)}.tmp`);
  const fh = await open(tmp, "wx", 0o600);
  try {
    let total = 0;
    const write = async (chunk: Uint8Array) => {
      total += chunk.byteLength;
      if (total > maxBytes) throw new StateRestoreError(`the snapshot unpacks to more than ${maxBytes} bytes`);
      await writeAll(fh, chunk);
    };
    const source = Readable.fromWeb(data as unknown as import("node:stream/web").ReadableStream<Uint8Array>);
    const sink = async (chunks: AsyncIterable<Uint8Array>) => {
      for await (const chunk of chunks) await write(chunk);
    };
    try {
      if (gzip) await pipeline(source, createGunzip(), sink);
      else await pipeline(source, sink);
    } catch (e) {
      if (e instanceof StateRestoreError) throw e;
      throw new StateRestoreError(`cannot ${gzip ? "unpack" : "read"} the snapshot: ${(e as Error).message}`);
    }
    await fh.sync();
    await fh.close();
    return tmp;
  } catch (e) {
    await fh.close().catch(() => {});
    rmSync(tmp, { force: true });
    throw e;
  }
}

async function writeAll(fh: FileHandle, chunk: Uint8Array): Promise<void> {
  let off = 0;
  while (off < chunk.byteLength) off += (await fh.write(chunk, off, chunk.byteLength - off)).bytesWritten;
}

/**
 * Make sure no other process has the database open, and fold its WAL into the file so the copy kept is complete:
 * leaving WAL mode needs the database to ourselves, so another connection (a running server, a `sundeck users`)
 * makes it fail at once instead of waiting.
 */
export function takeOver(dbPath: string): void {
  let db: Database;
  try {
    db = new Database(dbPath, { readwrite: true, create: false });
  } catch (e) {
    throw new StateRestoreError(`cannot open the current database: ${(e as Error).message}`);
  }
  try {
    db.run("PRAGMA busy_timeout = 0");
    db.query("PRAGMA journal_mode = DELETE").get();
  } catch (e) {
    const msg = (e as Error).message;
    if (/locked|busy/i.test(msg)) {
      throw new StateRestoreError(`${dbPath} is open in another process (is the server running?): stop it first`);
    }
    throw new StateRestoreError(`cannot take over the current database: ${msg}`);
  } finally {
    db.close(true);
  }
}

/** The name the previous database is kept under: `<db>.before-restore-20261127T031500Z`. */
export function keptName(dbPath: string, now: number): string {
  const stamp = new Date(now)
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replace(/[-:]/g, "");
  return `${dbPath}.before-restore-${stamp}`;
}

/** What `replaceDatabase` did. */
export interface Replaced {
  /** Where the previous database is now, or null when there was none. */
  kept: string | null;
  sizeBytes: number;
}

/**
 * Swap the vetted `tmp` in as `dbPath`. The previous file gets a second name first (a hard link, or a copy where
 * links are not possible), then one rename replaces it: `dbPath` names the old or the new database at every moment.
 * Stale -wal and -shm files go, so nothing of the old database is replayed into the new one.
 */
export function replaceDatabase(dbPath: string, tmp: string, now: number): Replaced {
  let kept: string | null = null;
  if (existsSync(dbPath)) {
    takeOver(dbPath);
    kept = keptName(dbPath, now);
    if (existsSync(kept)) kept = `${kept}-${randomHex(3)}`;
    try {
      linkSync(dbPath, kept);
    } catch {
      copyFile(dbPath, kept);
    }
  }
  for (const s of ["-wal", "-shm", "-journal"]) rmSync(`${dbPath}${s}`, { force: true });
  renameSync(tmp, dbPath);
  const dirFd = openSync(dirname(dbPath), "r");
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
  return { kept, sizeBytes: statSync(dbPath).size };
}

function copyFile(from: string, to: string): void {
  // Bun.write would read it whole; a small loop keeps memory flat for a large database
  const src = openSync(from, "r");
  const dst = openSync(to, "wx", 0o600);
  try {
    const buf = Buffer.alloc(1 << 20);
    for (let n = readSync(src, buf); n > 0; n = readSync(src, buf)) {
      let off = 0;
      while (off < n) off += writeSync(dst, buf, off, n - off);
    }
    fsyncSync(dst);
  } finally {
    closeSync(src);
    closeSync(dst);
  }
}
