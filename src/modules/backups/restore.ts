/**
 * Restores, from a stored run or an uploaded archive. A tar archive (volume, sqlite) is read once in full by the
 * vetting before a byte is extracted, then read again to restore; both passes are streams and the decompressed size
 * is capped on each. At most `max_concurrent_restores` run at once server-wide (the next answers 429 with
 * Retry-After). A strategy that `needsStop` (volume, sqlite, redis) has the service's running containers stopped around
 * the restore and started again whatever happens, under the app's lock so no deploy or lifecycle action runs meanwhile.
 */
import { rmSync } from "node:fs";
import { HttpError } from "../../lib/errors";
import { iso } from "../../lib/time";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import { gunzipCapped, peek } from "./archive/gunzip";
import { checkedTar, vetArchive } from "./archive/vet";
import { type BackupDeps, specOf } from "./deps";
import type { RestoreRow, RunRow } from "./repo";
import { firstFile } from "./strategies/run";
import type { BackupContainer, Strategy } from "./types";

/** Strategies whose restore needs the service stopped (when the strategy does not say so itself). */
export const STOP_STRATEGIES = new Set(["volume", "sqlite", "redis"]);

/** Whether a strategy's restore runs with the service stopped. */
export const needsStop = (s: Strategy): boolean => (s as { needsStop?: boolean }).needsStop ?? STOP_STRATEGIES.has(s.id);
/** Retry-After of a refused restore, seconds. */
export const RETRY_AFTER_S = 30;

/** Where a restore reads from: called once per pass (vetting, then restoring). */
export type Opener = () => Promise<ReadableStream<Uint8Array>>;

const SQLITE_MAGIC = "SQLite format 3";

/** The stream, gunzipped (and capped) when it starts with the gzip magic. */
async function plain(src: ReadableStream<Uint8Array>, maxBytes: number): Promise<ReadableStream<Uint8Array>> {
  const [head, rest] = await peek(src, 2);
  return head[0] === 0x1f && head[1] === 0x8b ? gunzipCapped(rest, maxBytes) : rest;
}

/**
 * Whether a strategy's archive is a tar, vetted before anything is extracted: volume always; sqlite when it is not
 * the database file itself (its own dumps are the file; an upload may also be a tar holding it).
 */
export async function isTar(strategy: string, open: Opener, maxBytes: number): Promise<boolean> {
  if (strategy === "volume") return true;
  if (strategy !== "sqlite") return false;
  const [head, rest] = await peek(await plain(await open(), maxBytes), SQLITE_MAGIC.length);
  await rest.cancel().catch(() => {});
  return new TextDecoder().decode(head.subarray(0, SQLITE_MAGIC.length)) !== SQLITE_MAGIC;
}

/**
 * The bytes a strategy restores from: a tar is passed on entry by entry only once each was accepted (vetted again as
 * it streams, so an archive that changed since the first pass cannot slip through), and sqlite gets the first file
 * of it; anything else is gunzipped when it starts with the gzip magic. The decompressed size is capped either way.
 */
export async function restoreStream(strategy: string, tar: boolean, src: ReadableStream<Uint8Array>, maxBytes: number) {
  if (!tar) return plain(src, maxBytes);
  const checked = checkedTar(src, { maxBytes });
  return strategy === "volume" ? checked : firstFile(checked);
}

/** Pass a stream through, counting; errors once more than `max` bytes went by. */
export function capped(s: ReadableStream<Uint8Array>, max: number, count: (n: number) => void): ReadableStream<Uint8Array> {
  let n = 0;
  return s.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        n += chunk.byteLength;
        count(n);
        if (n > max) c.error(new Error(`restore archive is larger than the ${max} byte cap once decompressed`));
        else c.enqueue(chunk);
      },
    }),
  );
}

/** What a restore works on, settled before the 202. */
export interface RestorePlan {
  slug: string;
  strategy: Strategy;
  container: BackupContainer;
  runId: number | null;
  open: Opener;
  /** A temp file to remove when done (uploads). */
  temp?: string;
}

/** Build the restorer. */
export function createRestorer(d: BackupDeps & { activity: Activity }) {
  let slots = 0;
  const active = new Map<number, { abort: AbortController; done: Promise<void> }>();

  /** Take a slot now or answer 429. */
  const admit = () => {
    if (slots >= d.maxConcurrentRestores) {
      throw new HttpError(429, `at most ${d.maxConcurrentRestores} restores run at once`, {
        "retry-after": String(RETRY_AFTER_S),
      });
    }
    slots++;
    let released = false;
    return () => {
      if (!released) slots--;
      released = true;
    };
  };

  /** Vet a tar archive in full (a refusal is a 400 naming the entry); says whether it is a tar. */
  const vet = async (strategy: string, open: Opener): Promise<boolean> => {
    if (!(await isTar(strategy, open, d.maxRestoreBytes))) return false;
    await vetArchive(await open(), { maxBytes: d.maxRestoreBytes });
    return true;
  };

  const execute = async (p: RestorePlan, row: RestoreRow, signal: AbortSignal, actor: Actor) => {
    await d.ready?.().catch(() => {});
    let bytes = 0;
    let error: string | null = null;
    const stop = needsStop(p.strategy);
    const release = stop ? await d.lock(p.slug) : null;
    const stopped: BackupContainer[] = [];
    try {
      // an upload was vetted before its 202; a stored run's archive is read in full here, before anything is stopped
      const tar = p.runId !== null ? await vet(p.strategy.id, p.open) : await isTar(p.strategy.id, p.open, d.maxRestoreBytes);
      if (stop) {
        // every running replica of the service, the target first: none may write while the data is replaced; only
        // what was running is stopped, and so started again (a service stopped on purpose stays stopped)
        const up =
          p.container.service && d.containers.running ? await d.containers.running(p.slug, p.container.service) : [p.container];
        const target = up.some((c) => c.id === p.container.id) ? [p.container] : [];
        for (const c of [...target, ...up.filter((o) => o.id !== p.container.id)]) {
          stopped.push(c);
          await d.containers.stop(c);
        }
      }
      const data = capped(await restoreStream(p.strategy.id, tar, await p.open(), d.maxRestoreBytes), d.maxRestoreBytes, (n) => {
        bytes = n;
      });
      await p.strategy.restore(p.container, data, { signal });
    } catch (e) {
      error = signal.aborted
        ? "cancelled: the server is stopping"
        : e instanceof HttpError
          ? (e.reason ?? e.message)
          : (e as Error).message;
    } finally {
      for (const c of stopped) {
        await d.containers.start(c).catch((e) => {
          d.log.error("could not start a container again after a restore", { container: c.name, error: (e as Error).message });
          error ??= `restored, but ${c.name} did not start again: ${(e as Error).message}`;
        });
      }
      release?.();
      if (p.temp) rmSync(p.temp, { force: true });
    }
    d.repo.updateRestore(row.id, { status: error ? "failed" : "succeeded", error, bytes, finishedAt: iso(d.clock.now()) });
    d.activity.record({
      actor,
      category: "backup",
      action: error ? "restore_failed" : "restore_succeeded",
      target: p.container.service || p.container.name,
      appSlug: p.slug,
      summary: `${actor.name} restored ${p.strategy.id} into ${p.container.name}${p.runId ? ` from run ${p.runId}` : " from an upload"}${error ? `: failed: ${error}` : ""}`,
      error,
    });
  };

  return {
    admit,
    vet,

    /** Start a planned restore in the background (its slot already taken); returns its row. */
    start(p: RestorePlan, release: () => void, actor: Actor): RestoreRow {
      const row = d.repo.insertRestore({
        runId: p.runId,
        appSlug: p.slug,
        strategy: p.strategy.id,
        service: p.container.service || null,
        container: p.container.name,
        status: "running",
        startedAt: iso(d.clock.now()),
      });
      const abort = new AbortController();
      const done = execute(p, row, abort.signal, actor)
        .catch((e) => d.log.error("restore crashed", { restore: row.id, error: (e as Error).message }))
        .finally(() => {
          release();
          active.delete(row.id);
        });
      active.set(row.id, { abort, done });
      return row;
    },

    /** Where a stored run's archive is read from. */
    openRun(run: RunRow, secret: string | null): Opener {
      const target = d.target(specOf(run.targetKind, run.targetJson), secret);
      return () => target.get(run.location!);
    },

    running: () => slots,

    wait: async (id: number) => {
      await active.get(id)?.done;
    },

    async stop(): Promise<void> {
      const all = [...active.values()];
      for (const a of all) a.abort.abort();
      await Promise.all(all.map((a) => a.done));
    },
  };
}

/** The restorer's type. */
export type Restorer = ReturnType<typeof createRestorer>;
