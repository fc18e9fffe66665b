/**
 * Restores, from a stored run or an uploaded archive. A tar archive (volume, sqlite) is read once in full by the
 * vetting before a byte is extracted, then read again to restore; both passes are streams and the decompressed size
 * is capped on each. A stored run's archive is also checked against the size and sha256 its run recorded: in the
 * vetting pass (or a pass of its own for archives that are not tars) before anything is touched, and again while it
 * is restored. At most `max_concurrent_restores` run at once server-wide (the next answers 429 with Retry-After). A
 * strategy that `needsStop` (volume, sqlite, redis) has the service's running containers stopped around the restore
 * and started again whatever happens, under the app's lock so no deploy or lifecycle action runs meanwhile; each is
 * written in the restore's row before it is stopped, so recovery after a kill starts every one of them again.
 */
import { rmSync } from "node:fs";
import { HttpError } from "../../lib/errors";
import { iso } from "../../lib/time";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import { gunzipCapped, peek } from "./archive/gunzip";
import { checkedTar, type TarEntry, vetArchive } from "./archive/vet";
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

/** What a stored archive must be: the size and sha256 its run recorded. */
export interface Expected {
  size: number;
  sha256: string;
}

/** What was read of an archive: its size, and its sha256 (null when reading stopped past the expected size). */
export interface Digest {
  size: number;
  sha256: string | null;
}

/** The start of a sha256, enough to tell two apart in a message. */
const short = (h: string) => `${h.slice(0, 12)}…`;

/** An archive that is not what its run stored. */
export class ArchiveChanged extends Error {
  override name = "ArchiveChanged";
}

/** The error of an archive that is not what its run stored; `between`: it matched when checked, then changed. */
export function changed(got: Digest, want: Expected, between = false): ArchiveChanged {
  const what = between
    ? "archive changed while it was restored (it matched its backup when checked before the restore)"
    : "archive changed since the backup";
  if (got.sha256 === null) {
    return new ArchiveChanged(`${what}: more than the ${want.size} bytes stored (sha256 expected ${short(want.sha256)})`);
  }
  const size = got.size === want.size ? "" : ` (${got.size} bytes, expected ${want.size})`;
  return new ArchiveChanged(`${what}: sha256 ${short(got.sha256)} expected ${short(want.sha256)}${size}`);
}

const same = (a: Digest, b: Expected) => a.size === b.size && a.sha256 === b.sha256;

/**
 * A stream read while it is hashed and counted. The consumer gets it chunk by chunk (no read-ahead); what the
 * consumer leaves (a tar reader stops at the end-of-archive blocks, a refusal stops at once) is read by `finish`,
 * which returns the size and sha256 of every byte, reading no more than one chunk past `want.size`. With `strict`, the
 * stream errors before passing on a byte past the expected size, and at its end when its bytes differ, so a consumer
 * never takes an archive that differs as a whole one.
 */
export function digesting(src: ReadableStream<Uint8Array>, want?: Expected, o: { strict?: boolean; between?: boolean } = {}) {
  const reader = src.getReader();
  const hasher = new Bun.CryptoHasher("sha256");
  let size = 0;
  let ended = false;
  let digest: string | null = null;
  // one read at a time: `finish` may be called while a read the consumer asked for is still pending
  let queue: Promise<unknown> = Promise.resolve();
  const take = (): Promise<Uint8Array | null> => {
    const next = queue.then(async () => {
      if (ended) return null;
      const r = await reader.read();
      if (r.done) {
        ended = true;
        return null;
      }
      hasher.update(r.value);
      size += r.value.byteLength;
      return r.value;
    });
    queue = next.catch(() => {});
    return next;
  };
  const result = (): Digest => {
    digest ??= hasher.digest("hex");
    return { size, sha256: digest };
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        const v = await take();
        if (want && o.strict && (size > want.size || (v === null && !same(result(), want)))) {
          c.error(changed(v === null ? result() : { size, sha256: null }, want, o.between));
        } else if (v === null) c.close();
        else c.enqueue(v);
      },
      cancel() {
        // the rest is read by finish(), or dropped by close()
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    /** Read what is left (at most one chunk past `want.size`) and return the size and sha256 of what was read. */
    async finish(): Promise<Digest> {
      while (!ended && (!want || size <= want.size)) await take();
      if (!ended) await reader.cancel().catch(() => {});
      return ended ? result() : { size, sha256: null };
    },
    /** Drop the source unread. */
    close: () => {
      queue = queue.then(() => reader.cancel().catch(() => {}));
    },
  };
}

/** An error's text for a restore row: an HttpError's reason (the vetting's refusal), else its message. */
const reason = (e: unknown): string => (e instanceof HttpError ? (e.reason ?? e.message) : (e as Error).message);

/** What a restore works on, settled before the 202. */
export interface RestorePlan {
  slug: string;
  strategy: Strategy;
  container: BackupContainer;
  runId: number | null;
  open: Opener;
  /** The stored run's size and sha256 (null for an upload, or a run that recorded none). */
  expect?: Expected | null;
  /** A temp file to remove when done (uploads). */
  temp?: string;
  /** A volume upload of one mount's files at the archive's root: that mount's destination (`RestoreControl.mount`). */
  mount?: string;
}

/** Build the restorer. */
export function createRestorer(d: BackupDeps & { activity: Activity }) {
  let slots = 0;
  const active = new Map<number, { abort: AbortController; done: Promise<void> }>();

  /** Answer 429 when every slot is taken. */
  const room = () => {
    if (slots >= d.maxConcurrentRestores) {
      throw new HttpError(429, `at most ${d.maxConcurrentRestores} restores run at once`, {
        "retry-after": String(RETRY_AFTER_S),
      });
    }
  };

  /** Take a slot now or answer 429. */
  const admit = () => {
    room();
    slots++;
    let released = false;
    return () => {
      if (!released) slots--;
      released = true;
    };
  };

  /**
   * Vet a tar archive in full (a refusal is a 400 naming the entry), showing `onEntry` each accepted entry; says
   * whether it is a tar.
   */
  const vet = async (strategy: string, open: Opener, onEntry?: (e: TarEntry) => void): Promise<boolean> => {
    if (!(await isTar(strategy, open, d.maxRestoreBytes))) return false;
    await vetArchive(await open(), { maxBytes: d.maxRestoreBytes, onEntry });
    return true;
  };

  /**
   * A stored archive checked against its run's size and sha256, and vetted when it is a tar, before anything is
   * touched; says whether it is a tar. A volume's archive is hashed in the vetting pass itself; any other is read
   * through once, hashed, before it is looked at. An archive that differs fails with both reasons when the vetting
   * refused it too.
   */
  const verify = async (strategy: string, open: Opener, want: Expected): Promise<boolean> => {
    const src = digesting(await open(), want);
    let refused: unknown = null;
    if (strategy === "volume") await vetArchive(src.stream, { maxBytes: d.maxRestoreBytes }).catch((e) => (refused = e));
    let got: Digest | null;
    try {
      got = await src.finish();
    } catch (e) {
      src.close();
      throw refused ?? e;
    }
    if (!same(got, want)) {
      const e = changed(got, want);
      if (refused && !(refused instanceof ArchiveChanged)) e.message += `; the archive is also refused: ${reason(refused)}`;
      throw e;
    }
    if (refused) throw refused;
    return strategy === "volume" || vet(strategy, open);
  };

  const execute = async (p: RestorePlan, row: RestoreRow, signal: AbortSignal, actor: Actor) => {
    await d.ready?.().catch(() => {});
    let bytes = 0;
    let error: string | null = null;
    const stop = needsStop(p.strategy);
    const release = stop ? await d.lock(p.slug) : null;
    const stopped: BackupContainer[] = [];
    const want = p.expect ?? null;
    let src: ReturnType<typeof digesting> | null = null;
    try {
      // an upload was vetted before its 202; a stored run's archive is read in full here (checked against its run,
      // and vetted), before anything is stopped
      const tar =
        p.runId === null
          ? await isTar(p.strategy.id, p.open, d.maxRestoreBytes)
          : want
            ? await verify(p.strategy.id, p.open, want)
            : await vet(p.strategy.id, p.open);
      if (stop) {
        // every running replica of the service, the target first: none may write while the data is replaced; only
        // what was running is stopped, and so started again (a service stopped on purpose stays stopped). Each is
        // written in the row before it is stopped: a kill between the two cannot lose one for recovery.
        const up =
          p.container.service && d.containers.running ? await d.containers.running(p.slug, p.container.service) : [p.container];
        const target = up.some((c) => c.id === p.container.id) ? [p.container] : [];
        for (const c of [...target, ...up.filter((o) => o.id !== p.container.id)]) {
          stopped.push(c);
          d.repo.updateRestore(row.id, { stoppedContainers: JSON.stringify(stopped.map((x) => x.id)) });
          await d.containers.stop(c);
        }
      }
      // the stored archive is hashed again as it is restored: one that changed since the check fails the restore
      src = want ? digesting(await p.open(), want, { strict: true, between: true }) : null;
      const data = capped(
        await restoreStream(p.strategy.id, tar, src ? src.stream : await p.open(), d.maxRestoreBytes),
        d.maxRestoreBytes,
        (n) => {
          bytes = n;
        },
      );
      await p.strategy.restore(p.container, data, { signal, mount: p.mount });
      const got = src ? await src.finish() : null;
      if (got && want && !same(got, want)) throw changed(got, want, true);
    } catch (e) {
      error = signal.aborted ? "cancelled: the server is stopping" : reason(e);
      // a restore that failed on an archive that changed meanwhile (a gzip or tar error on its bytes) says so
      if (src && want && !signal.aborted && !(e instanceof ArchiveChanged)) {
        const got = await src.finish().catch(() => null);
        if (got && !same(got, want)) error = `${changed(got, want, true).message}; the restore failed: ${error}`;
      }
    } finally {
      src?.close();
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
    room,
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
