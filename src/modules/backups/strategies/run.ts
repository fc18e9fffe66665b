/**
 * What the strategies share: a command's output as a dump stream that fails when the command fails, a stream fed to a
 * command's stdin, throttled progress, the container's environment, a file's owner read through the archive endpoint,
 * and spooling a stream of unknown length to a private temp file (a tar header needs the size up front).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Engine } from "../../../docker/types";
import { EngineError } from "../../../docker/types";
import type { BackupContainer, OpControl, Strategy } from "../types";
import { readTar } from "./tar";

/** What the strategies need from outside. */
export interface StrategyDeps {
  engine: Engine;
  /** Where restores spool a file of unknown size (default: the OS temp dir); files are 0600 and removed after. */
  tmpDir?: string;
}

/**
 * A strategy as the runner uses it. `needsStop`: the restore must run while the service is stopped (the caller stops
 * every container of the service before `restore` and starts them after); dumps always run on a running container.
 */
export interface AppStrategy extends Strategy {
  needsStop: boolean;
}

/** Label naming the file a strategy works on (sqlite: the database; redis: the RDB file). */
export const PATH_LABEL = "sundeck.backup.path";

/** Throws unless the container is stopped (a restore that needs it stopped must not race the running service). */
export async function requireStopped(engine: Engine, c: BackupContainer, what: string): Promise<any> {
  const info = await engine.inspect(c.id);
  if (info?.State?.Running) throw new StrategyError(`${what} restore needs the service stopped: ${c.name} is running`);
  return info;
}

/** A strategy failed; the message says what ran and what it printed. */
export class StrategyError extends Error {
  override name = "StrategyError";
}

/** The value of `KEY` in the container's environment, or undefined. */
export function envOf(c: BackupContainer, key: string): string | undefined {
  const hit = c.env.find((e) => e.startsWith(`${key}=`));
  return hit === undefined ? undefined : hit.slice(key.length + 1);
}

/** The first of `keys` set (non-empty) in the container's environment. */
export function firstEnv(c: BackupContainer, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = envOf(c, k);
    if (v) return v;
  }
  return undefined;
}

/**
 * A command's stdout as a stream that errors (naming the command and its stderr) when the command exits non-zero, so
 * a failed dump never looks like a short good one.
 */
export async function execOutput(
  engine: Engine,
  c: BackupContainer,
  what: string,
  cmd: string[],
  env: string[],
  ctl: OpControl,
): Promise<ReadableStream<Uint8Array>> {
  const p = await engine.exec(c.id, { cmd, env, signal: ctl.signal });
  const reader = p.stdout.getReader();
  const tick = progress(ctl);
  return new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      try {
        const r = await reader.read();
        if (!r.done) {
          tick(r.value.length);
          ctrl.enqueue(r.value);
          return;
        }
        const res = await p.result;
        if (res.exitCode !== 0) ctrl.error(failure(what, res.exitCode, res.stderr));
        else ctrl.close();
      } catch (e) {
        ctrl.error(e);
      }
    },
    cancel(reason) {
      reader.cancel(reason).catch(() => {});
    },
  });
}

/** Feed `data` to a command's stdin; resolves when it exited 0, throws with its stderr otherwise. */
export async function execInput(
  engine: Engine,
  c: BackupContainer,
  what: string,
  cmd: string[],
  env: string[],
  data: ReadableStream<Uint8Array>,
  ctl: OpControl,
): Promise<void> {
  const p = await engine.exec(c.id, { cmd, env, stdin: metered(data, ctl), signal: ctl.signal });
  // stdout of a restore is noise (psql/mariadb echo little); drained so the command never blocks on a full pipe
  const out = await new Response(p.stdout).text();
  const res = await p.result;
  if (res.exitCode !== 0) throw failure(what, res.exitCode, res.stderr || out.slice(-4000));
}

/** Run a short command and return its stdout; throws with its stderr when it fails. */
export async function execText(engine: Engine, c: BackupContainer, what: string, cmd: string[], env: string[] = []) {
  const p = await engine.exec(c.id, { cmd, env });
  const out = await new Response(p.stdout).text();
  const res = await p.result;
  if (res.exitCode !== 0) throw failure(what, res.exitCode, res.stderr || out.slice(-4000));
  return out;
}

/** True when the command exists in the container and exits 0. */
export async function execOk(engine: Engine, c: BackupContainer, cmd: string[]): Promise<boolean> {
  try {
    const p = await engine.exec(c.id, { cmd });
    await new Response(p.stdout).arrayBuffer();
    return (await p.result).exitCode === 0;
  } catch {
    return false;
  }
}

function failure(what: string, code: number, stderr: string): StrategyError {
  const tail = stderr.trim().split("\n").slice(-5).join("; ").slice(0, 1000);
  if (code === 126 || code === 127) return new StrategyError(`${what}: command not found in the container (exit ${code})`);
  return new StrategyError(`${what} exited with ${code}${tail ? `: ${tail}` : ""}`);
}

/** A progress callback called at most 4 times a second with the running byte count. */
export function progress(ctl: OpControl): (n: number) => void {
  let total = 0;
  let last = 0;
  return (n) => {
    total += n;
    const now = Date.now();
    if (ctl.progress && now - last >= 250) {
      last = now;
      ctl.progress(total);
    }
  };
}

/** `data` passed through, counting bytes for progress. */
export function metered(data: ReadableStream<Uint8Array>, ctl: OpControl): ReadableStream<Uint8Array> {
  if (!ctl.progress) return data;
  const tick = progress(ctl);
  return data.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        tick(chunk.length);
        c.enqueue(chunk);
      },
    }),
  );
}

/** Owner and mode of a path in the container (from the archive header; works on stopped containers), or null. */
export async function ownerOf(
  engine: Engine,
  id: string,
  path: string,
): Promise<{ uid: number; gid: number; mode: number } | null> {
  let tar: ReadableStream<Uint8Array>;
  try {
    tar = await engine.getArchive(id, path);
  } catch (e) {
    if (e instanceof EngineError && e.status === 404) return null;
    throw e;
  }
  let found: { uid: number; gid: number; mode: number } | null = null;
  const stop = new Error("first header read");
  await readTar(tar, async (e) => {
    found = { uid: e.uid, gid: e.gid, mode: e.mode & 0o7777 };
    throw stop;
  }).catch((e) => {
    if (e !== stop) throw e;
  });
  return found;
}

/** The body of the first regular file of a tar stream, as a stream. */
export function firstFile(tar: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const stop = new Error("first file read");
  let ctrl!: ReadableStreamDefaultController<Uint8Array>;
  let wake: (() => void) | null = null;
  let wanted = Promise.resolve();
  const out = new ReadableStream<Uint8Array>(
    {
      start(c) {
        ctrl = c;
      },
      pull() {
        wake?.();
        wake = null;
      },
    },
    { highWaterMark: 2 },
  );
  readTar(tar, async (e, body) => {
    if (e.type !== "0" && e.type !== "\0" && e.type !== "7") return;
    for await (const chunk of body) {
      ctrl.enqueue(chunk);
      if ((ctrl.desiredSize ?? 1) <= 0) {
        wanted = new Promise<void>((res) => {
          wake = res;
        });
        await wanted;
      }
    }
    throw stop;
  })
    .then(() => ctrl.error(new StrategyError("the archive held no file")))
    .catch((e) => (e === stop ? ctrl.close() : ctrl.error(e)));
  return out;
}

/** Write a stream to a new private temp file; the caller removes it with `done()`. */
export async function spool(
  data: ReadableStream<Uint8Array>,
  dir: string | undefined,
  ctl: OpControl,
): Promise<{ path: string; size: number; done: () => void }> {
  const d = mkdtempSync(join(dir ?? tmpdir(), "sundeck-restore-"));
  const path = join(d, "data");
  const done = () => rmSync(d, { recursive: true, force: true });
  try {
    const size = await Bun.write(path, new Response(metered(data, ctl)));
    return { path, size, done };
  } catch (e) {
    done();
    throw e;
  }
}
