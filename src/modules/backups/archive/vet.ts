/**
 * What a restore calls: `vetArchive` reads a whole archive (pass 1) and says whether it may be extracted;
 * `checkedTar` passes the tar bytes on while vetting them again (pass 2), so an archive that changed between the
 * passes still cannot slip a refused entry through: each entry's bytes leave only after its header was accepted.
 */
import { collecting, gunzipCapped, peek } from "./gunzip";
import { type TarEntry, TarReader } from "./reader";

export { gunzipCapped } from "./gunzip";
export type { TarEntry } from "./reader";
export { ArchiveRefused } from "./refused";

/** Longest stretch of reading before giving the event loop a turn (inflating never waits on I/O by itself). */
const SLICE_MS = 10;

/** A function to await between chunks: it yields to the event loop once `SLICE_MS` have passed since the last time. */
function fairness(): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    const now = performance.now();
    if (now - since < SLICE_MS) return undefined;
    since = now;
    return new Promise((resolve) => setImmediate(resolve));
  };
}

/** How to read an archive: gzip or not (`"auto"` looks for the gzip magic), and the cap on decompressed bytes. */
export interface VetOptions {
  /** Default "auto". */
  gzip?: "auto" | boolean;
  /** Most tar bytes (after gunzip) read before refusing: config `backups.max_restore_bytes`. */
  maxBytes: number;
  /** Called with each accepted entry in order (`vetArchive`): what a strategy judges the archive's layout by. */
  onEntry?: (e: TarEntry) => void;
}

/**
 * Free a chunk's memory now rather than at the next collection, when it is a whole buffer nobody else holds (the
 * inflater's output read by the vetting pass: the reader copies what it keeps). Detached, it reads as empty.
 */
function release(chunk: Uint8Array): void {
  const buf = chunk.buffer as ArrayBuffer & { transfer?: (n: number) => ArrayBuffer };
  if (chunk.byteOffset === 0 && chunk.byteLength === buf.byteLength && buf.transfer) buf.transfer(0);
}

/** The tar bytes of `src` (gunzipped and capped when it is gzip), read lazily. */
async function tarStream(src: ReadableStream<Uint8Array>, opts: VetOptions): Promise<ReadableStream<Uint8Array>> {
  let gzip = opts.gzip ?? "auto";
  let stream = src;
  if (gzip === "auto") {
    const [head, rest] = await peek(src, 2);
    gzip = head[0] === 0x1f && head[1] === 0x8b;
    stream = rest;
  }
  return gzip ? gunzipCapped(stream, opts.maxBytes) : collecting(stream);
}

/**
 * Read `src` through the reader; after the end-of-archive marker the rest is still
 * read (and counted against the cap) so a gzip trailer is checked, and its bytes ignored.
 */
async function drive(
  src: ReadableStream<Uint8Array>,
  tar: TarReader,
  owned: boolean,
  onEntry?: (e: TarEntry) => void,
): Promise<void> {
  const reader = src.getReader();
  const pause = fairness();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      tar.push(value);
      // entries are not kept: an archive of millions of empty files must not grow a list
      const { entries } = tar.take();
      if (onEntry) for (const e of entries) onEntry(e);
      if (owned) release(value);
      await pause();
    }
    tar.end();
  } catch (e) {
    reader.cancel(e).catch(() => {});
    throw e;
  }
}

/**
 * Vet a whole archive as a stream, holding no more than a header and its extended headers in memory. Throws
 * ArchiveRefused naming the first offending entry (or the archive, for gzip, truncation and the cap).
 */
export async function vetArchive(src: ReadableStream<Uint8Array>, opts: VetOptions): Promise<{ entries: number; bytes: number }> {
  const tar = new TarReader({ maxBytes: opts.maxBytes });
  const [head, rest] = opts.gzip === undefined || opts.gzip === "auto" ? await peek(src, 2) : [null, src];
  const gzip = head ? head[0] === 0x1f && head[1] === 0x8b : opts.gzip === true;
  // the inflated chunks are this pass's own (a plain tar's chunks are the caller's, and stay untouched)
  await drive(gzip ? gunzipCapped(rest, opts.maxBytes) : collecting(rest), tar, gzip, opts.onEntry);
  return { entries: tar.count, bytes: tar.bytes };
}

/** Every accepted entry of an archive in order (for listings and tests); throws ArchiveRefused like `vetArchive`. */
export async function* tarEntries(src: ReadableStream<Uint8Array>, opts: VetOptions): AsyncGenerator<TarEntry> {
  const tar = new TarReader({ maxBytes: opts.maxBytes });
  const reader = (await tarStream(src, opts)).getReader();
  const pause = fairness();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      tar.push(value);
      yield* tar.take().entries;
      await pause();
    }
    tar.end();
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * The uncompressed tar bytes of `src`, vetted on the way: an entry's header and data are passed on only once the
 * entry is accepted, the stream ends right after the end-of-archive marker, and it errors with ArchiveRefused (having
 * passed on no byte of the refused entry) when anything is wrong. Only closes after the input ended cleanly.
 */
export function checkedTar(src: ReadableStream<Uint8Array>, opts: VetOptions): ReadableStream<Uint8Array> {
  const tar = new TarReader({ maxBytes: opts.maxBytes, passOn: true });
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  const pause = fairness();
  return new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        try {
          reader ??= (await tarStream(src, opts)).getReader();
          await pause();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) {
              tar.end();
              return c.close();
            }
            tar.push(value);
            const { data } = tar.take();
            for (const d of data) c.enqueue(d);
            if (data.length) return;
            await pause();
          }
        } catch (e) {
          reader?.cancel(e).catch(() => {});
          // a refusal is the client's to read; a failing source (disk, S3) stays a server error with its detail logged
          c.error(e);
        }
      },
      cancel: (why) => (reader ? reader.cancel(why) : src.cancel(why)),
    },
    { highWaterMark: 0 },
  );
}
