/**
 * The local target: archives under `<data_dir>/backups`, files 0600 in directories 0700. A put streams into a temp
 * file beside its key (hashing as it goes), fsyncs and renames it into place, so a key names a whole archive or
 * nothing; temp files a killed process left behind are swept at startup.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, readdir, readFile, realpath, rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import type { OpControl, Stored, Target } from "../types";
import { checkKey, TargetError } from "./keys";
import { abortError, meter } from "./meter";

/** Name prefix of in-flight files; a key segment never starts with a dot, so no key can name one. */
const TEMP_PREFIX = ".sundeck-tmp-";
const PROBE = "sundeck probe\n";

/** The local target, plus the startup sweep of leftover temp files. */
export interface LocalTarget extends Target {
  kind: "local";
  /** The directory archives live under. */
  dir: string;
  /** Remove temp files a killed process left under `dir`; returns how many. Call before any put runs. */
  sweepTemp(): Promise<number>;
}

/** Options of {@link createLocalTarget}: `dir` is `<data_dir>/backups`. */
export interface LocalTargetOptions {
  dir: string;
  /** Minimum interval between progress reports (ms). */
  progressEveryMs?: number;
}

const codeOf = (e: unknown) => (e as NodeJS.ErrnoException)?.code ?? (e as Error)?.message ?? String(e);

/** Store archives as files under `opts.dir`. */
export function createLocalTarget(opts: LocalTargetOptions): LocalTarget {
  const dir = opts.dir;

  /** Create the base directory 0700 (and say so clearly when that fails). */
  async function ensureBase(): Promise<string> {
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      return await realpath(dir);
    } catch (e) {
      throw new TargetError(`backup dir ${dir} cannot be created: ${codeOf(e)}`, codeOf(e));
    }
  }

  /** The absolute path of a checked key, its parent resolved through links to stay inside the base. */
  async function pathOf(key: string, create: boolean): Promise<string> {
    checkKey(key);
    const base = await ensureBase();
    const parent = join(base, dirname(key));
    if (create) await mkdirPrivate(base, dirname(key));
    let realParent: string;
    try {
      realParent = await realpath(parent);
    } catch (e) {
      if (!create && codeOf(e) === "ENOENT") return join(parent, key.slice(key.lastIndexOf("/") + 1));
      throw new TargetError(`backup dir ${parent} is not usable: ${codeOf(e)}`, codeOf(e));
    }
    const rel = relative(base, realParent);
    if (rel.startsWith("..") || rel.startsWith(sep))
      throw new TargetError(`invalid backup key ${JSON.stringify(key)}: leaves ${dir}`);
    return join(realParent, key.slice(key.lastIndexOf("/") + 1));
  }

  async function put(key: string, data: ReadableStream<Uint8Array>, ctl: OpControl): Promise<Stored> {
    let path: string;
    try {
      path = await pathOf(key, true);
    } catch (e) {
      await data.cancel(e).catch(() => {});
      throw e;
    }
    const tmp = join(dirname(path), `${TEMP_PREFIX}${randomBytes(6).toString("hex")}`);
    const m = meter(data, ctl, { everyMs: opts.progressEveryMs });
    let fh: Awaited<ReturnType<typeof open>> | undefined;
    try {
      try {
        fh = await open(tmp, "wx", 0o600);
      } catch (e) {
        throw new TargetError(`backup dir ${dirname(path)} is not writable: ${codeOf(e)}`, codeOf(e));
      }
      for await (const chunk of m.stream) {
        let off = 0;
        while (off < chunk.byteLength) off += (await fh.write(chunk, off)).bytesWritten;
      }
      await fh.sync();
      await fh.close();
      fh = undefined;
      if (ctl.signal?.aborted) throw abortError(ctl.signal);
      await rename(tmp, path);
      await syncDir(dirname(path));
      return { key, sizeBytes: m.bytes(), sha256: m.sha256() };
    } catch (e) {
      await fh?.close().catch(() => {});
      await rm(tmp, { force: true }).catch(() => {});
      await m.stop(e);
      throw e;
    }
  }

  async function get(key: string): Promise<ReadableStream<Uint8Array>> {
    const path = await pathOf(key, false);
    try {
      const st = await stat(path);
      if (!st.isFile()) throw new TargetError(`backup file ${key} is not a file`);
    } catch (e) {
      if (e instanceof TargetError) throw e;
      throw new TargetError(
        codeOf(e) === "ENOENT" ? `backup file ${key} not found` : `backup file ${key}: ${codeOf(e)}`,
        codeOf(e),
      );
    }
    return Bun.file(path).stream();
  }

  async function del(key: string): Promise<void> {
    const path = await pathOf(key, false);
    try {
      await unlink(path);
    } catch (e) {
      if (codeOf(e) !== "ENOENT") throw new TargetError(`cannot delete backup file ${key}: ${codeOf(e)}`, codeOf(e));
    }
  }

  async function test(): Promise<void> {
    const base = await ensureBase();
    const probe = join(base, `.sundeck-probe-${randomBytes(6).toString("hex")}`);
    try {
      await writeFile(probe, PROBE, { mode: 0o600, flag: "wx" });
    } catch (e) {
      throw new TargetError(`backup dir ${dir} is not writable: ${codeOf(e)}`, codeOf(e));
    }
    try {
      const back = await readFile(probe, "utf8").catch((e) => {
        throw new TargetError(`backup dir ${dir} is not readable: ${codeOf(e)}`, codeOf(e));
      });
      if (back !== PROBE) throw new TargetError(`backup dir ${dir} gave back other bytes than written`);
    } finally {
      await unlink(probe).catch((e) => {
        throw new TargetError(`cannot delete a file in backup dir ${dir}: ${codeOf(e)}`, codeOf(e));
      });
    }
  }

  async function sweepTemp(): Promise<number> {
    let removed = 0;
    const walk = async (d: string): Promise<void> => {
      let entries: import("node:fs").Dirent[];
      try {
        entries = await readdir(d, { withFileTypes: true });
      } catch (e) {
        if (codeOf(e) === "ENOENT") return;
        throw e;
      }
      for (const ent of entries) {
        const p = join(d, ent.name);
        if (ent.isDirectory()) await walk(p);
        else if (ent.isFile() && (ent.name.startsWith(TEMP_PREFIX) || ent.name.startsWith(".sundeck-probe-"))) {
          await rm(p, { force: true });
          removed++;
        }
      }
    };
    await walk(dir);
    return removed;
  }

  return { kind: "local", dir, put, get, delete: del, presign: () => null, test, sweepTemp };
}

/** Create each missing directory of `rel` under `base` with mode 0700 (mkdir's mode is masked by the umask). */
async function mkdirPrivate(base: string, rel: string): Promise<void> {
  if (rel === "." || rel === "") return;
  let cur = base;
  for (const seg of rel.split("/")) {
    cur = join(cur, seg);
    try {
      await mkdir(cur, { mode: 0o700 });
      await chmod(cur, 0o700);
    } catch (e) {
      if (codeOf(e) !== "EEXIST") throw new TargetError(`backup dir ${cur} cannot be created: ${codeOf(e)}`, codeOf(e));
    }
  }
}

/** Make a rename durable: fsync the directory that holds the new name. */
async function syncDir(d: string): Promise<void> {
  const fh = await open(d, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
