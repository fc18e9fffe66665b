/**
 * Sundeck's own state as a backup source: a consistent snapshot of its SQLite database, made with `VACUUM INTO` on
 * a second connection in a worker thread. The snapshot reads one WAL snapshot of the database, so writers go on
 * while it is made (WAL readers do not block writers), and the server's event loop stays free (a 100 MB database
 * takes about half a second, which on the main thread would stall the proxy and the API for as long).
 *
 * The snapshot goes to a 0600 temp file under `<data_dir>/tmp`; once it is complete the file is opened and unlinked,
 * so the stream the runner reads leaves nothing behind, even after kill -9. A snapshot cut short by a kill is swept
 * away by the next one.
 */
import { closeSync, openSync, readdirSync, readSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../../db";
import { randomHex } from "../../lib/crypto";
import { ensurePrivateDir } from "../../lib/fs";
import type { Log } from "../../log/logger";
import type { BackupSource, OpControl } from "./types";

/** The strategy id of a snapshot of Sundeck's database, stored on its configs and runs. */
export const STATE_STRATEGY = "state";
/** File name extension of a stored snapshot (the runner gzips it). */
export const STATE_EXTENSION = ".sqlite.gz";

const PREFIX = "state-snapshot-";
const CHUNK = 64 * 1024;

// plain JavaScript run in a worker (a Blob URL works in `bun run`, `bun test` and the compiled binary alike, with no
// extra entry point in the build): one connection of its own, VACUUM INTO, close
const WORKER_SOURCE = `
import { Database } from "bun:sqlite";
self.onmessage = (e) => {
  const { src, dest } = e.data;
  let db;
  let error;
  try {
    db = new Database(src, { create: false });
    db.run("PRAGMA busy_timeout = 5000");
    db.run("VACUUM INTO ?", [dest]);
  } catch (err) {
    error = String((err && err.message) || err);
  }
  // closed before the answer: the caller terminates the worker once answered, which could cut a close made after it
  // and leave the connection open (and the WAL held) for the life of the process
  try { db && db.close(true); } catch {}
  postMessage(error === undefined ? { ok: true } : { ok: false, error });
};`;

export interface StateSourceDeps {
  db: Db;
  dataDir: string;
  log: Log;
}

/** The directory snapshots are made in. */
export function snapshotDir(dataDir: string): string {
  return join(dataDir, "tmp");
}

/**
 * Write a consistent copy of the database `db` to `dest` (created 0600; it must not exist). Runs on a second
 * connection in a worker; an in-memory database (tests) is copied on its own connection.
 */
export async function snapshotDatabase(db: Db, dest: string, signal?: AbortSignal, log?: Log): Promise<void> {
  // VACUUM INTO accepts an empty file: creating it first fixes its mode whatever the umask
  closeSync(openSync(dest, "wx", 0o600));
  try {
    if (db.path === ":memory:") db.sqlite.run("VACUUM INTO ?", [dest]);
    else await vacuumInWorker(db.path, dest, signal, log);
  } catch (e) {
    rmSync(dest, { force: true });
    throw e;
  }
}

async function vacuumInWorker(src: string, dest: string, signal?: AbortSignal, log?: Log): Promise<void> {
  signal?.throwIfAborted();
  let worker: Worker;
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
  try {
    worker = new Worker(url);
  } catch (e) {
    // no worker threads here: the snapshot is still consistent, it only holds the event loop meanwhile
    URL.revokeObjectURL(url);
    log?.warn("state snapshot runs on the main thread", { error: (e as Error).message });
    const { Database } = await import("bun:sqlite");
    const conn = new Database(src, { create: false });
    try {
      conn.run("PRAGMA busy_timeout = 5000");
      conn.run("VACUUM INTO ?", [dest]);
    } finally {
      conn.close(true);
    }
    return;
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal?.reason ?? new Error("snapshot cancelled"));
      signal?.addEventListener("abort", onAbort, { once: true });
      worker.onmessage = (e: MessageEvent<{ ok: boolean; error?: string }>) => {
        signal?.removeEventListener("abort", onAbort);
        if (e.data.ok) resolve();
        else reject(new Error(`database snapshot failed: ${e.data.error}`));
      };
      worker.onerror = (e) => {
        signal?.removeEventListener("abort", onAbort);
        reject(new Error(`database snapshot failed: ${e.message}`));
      };
      worker.postMessage({ src, dest });
    });
  } finally {
    worker.terminate();
    URL.revokeObjectURL(url);
  }
}

/** Remove snapshots a killed process left behind, except those being made now. */
function sweep(dir: string, active: Set<string>): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const p = join(dir, n);
    if (n.startsWith(PREFIX) && !active.has(p)) rmSync(p, { force: true });
  }
}

/**
 * Stream a file and forget its name at once: the open descriptor keeps the data readable, and nothing is left on
 * disk when the stream ends, fails, is cancelled, or the process dies.
 */
async function streamAndUnlink(path: string): Promise<ReadableStream<Uint8Array>> {
  // a plain descriptor, not a FileHandle: a stream its reader drops unread must not become an error at the next
  // collection (Bun fails a FileHandle closed by the collector); reads of a local file are short, so they are sync
  const fd = openSync(path, "r");
  rmSync(path, { force: true });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    try {
      closeSync(fd);
    } catch {}
  };
  return new ReadableStream<Uint8Array>({
    pull(c) {
      try {
        const buf = new Uint8Array(CHUNK);
        const n = readSync(fd, buf, 0, CHUNK, null);
        if (n === 0) {
          close();
          c.close();
        } else c.enqueue(n === CHUNK ? buf : buf.subarray(0, n));
      } catch (e) {
        close();
        c.error(e);
      }
    },
    cancel: close,
  });
}

/** The backup source of Sundeck's own database (strategy `state`): a fresh consistent snapshot each time. */
export function createStateSource(deps: StateSourceDeps): BackupSource {
  const dir = snapshotDir(deps.dataDir);
  const active = new Set<string>();
  return {
    strategy: STATE_STRATEGY,
    extension: STATE_EXTENSION,
    async open(ctl: OpControl) {
      ensurePrivateDir(dir);
      sweep(dir, active);
      const dest = join(dir, `${PREFIX}${randomHex(8)}.sqlite`);
      active.add(dest);
      const started = performance.now();
      try {
        await snapshotDatabase(deps.db, dest, ctl.signal, deps.log);
        deps.log.info("state snapshot made", { ms: Math.round(performance.now() - started) });
        return await streamAndUnlink(dest);
      } finally {
        active.delete(dest);
        rmSync(dest, { force: true });
      }
    },
  };
}
