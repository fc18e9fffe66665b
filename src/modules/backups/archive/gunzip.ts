/**
 * Streaming gunzip with a cap on what comes out. Bun's DecompressionStream inflates a chunk in pieces as the reader
 * pulls (measured: a 10 GiB bomb read to a 2 GiB cap grew RSS ~30 MiB, against ~25 MiB and 3x the time for
 * node:zlib's createGunzip), and input is still fed in slices of at most 64 KiB so one chunk can never inflate to more
 * than ~64 MiB. Concatenated gzip members are read as one stream, as `gzip -d` does; bytes after the last member that
 * are not another member, a truncated member and a bad CRC are refused.
 */
import { ArchiveRefused, overCap } from "./refused";

const SLICE = 64 * 1024;
/**
 * Chunks that went by are garbage at once, but the collector paces itself by the heap's size, and the runtime keeps
 * what it freed resident for reuse: the resident size grows to the most garbage ever waiting at once. Measured per
 * stage (docs/benchmarks.md, Backups): draining the Engine API's archive stream grew RSS by ~21 MiB, with a full
 * collection every 4 MiB by ~5; a young collection alone frees little of it (chunks outlive a young collection while
 * queued in the streams, and the array buffers' memory goes with the old generation). So every COLLECT_EVERY bytes
 * the streams of the process move together, a full collection runs (3 ms on the bench's heap, ~10 ms on a test
 * server's 10 MiB heap under load): it paces the streams (4 MiB per 10 ms is a 400 MiB/s ceiling) and bounds their
 * garbage however many run at once. A heap so big that full collections would take more than COLLECT_SHARE of the
 * time (banked up to COLLECT_BANK_MS) gets young ones (well under 1 ms) in between, the old floor: with a 300 MiB
 * heap, a bomb read to the 8 GiB cap grew RSS by ~370 MiB without any collection, ~55 MiB with young ones.
 */
const COLLECT_EVERY = 4 * 1024 * 1024;
const COLLECT_SHARE = 0.5;
const COLLECT_BANK_MS = 500;
/** Bytes moved by every stream so far and the count at which the next collection runs; the time budget left. */
const shared = { moved: 0, next: COLLECT_EVERY, leftMs: COLLECT_BANK_MS, atMs: 0 };

/** One collection: full while the time budget allows, young otherwise. */
export function collect(): void {
  const now = performance.now();
  shared.leftMs = Math.min(COLLECT_BANK_MS, shared.leftMs + (now - shared.atMs) * COLLECT_SHARE);
  shared.atMs = now;
  if (shared.leftMs <= 0) {
    Bun.gc(false);
    return;
  }
  Bun.gc(true);
  const end = performance.now();
  shared.leftMs -= end - now;
  shared.atMs = end;
}

/** A counter of bytes moved (shared by every stream of the process): every COLLECT_EVERY of them, collect. */
export function collector(): (bytes: number) => void {
  return (bytes) => {
    shared.moved += bytes;
    if (shared.moved >= shared.next) {
      shared.next = shared.moved + COLLECT_EVERY;
      collect();
    }
  };
}

/** `src` passed through unchanged, collecting young garbage as it goes (a plain tar's parse makes it too). */
export function collecting(src: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const count = collector();
  return src.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        count(chunk.length);
        c.enqueue(chunk);
      },
    }),
  );
}

/** Re-chunk a stream into slices of at most `SLICE` bytes (inflate output per input chunk stays bounded). */
function sliced(src: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = src.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      const { done, value } = await reader.read();
      if (done) return c.close();
      for (let at = 0; at < value.length; at += SLICE) c.enqueue(value.subarray(at, at + SLICE));
    },
    cancel: (why) => reader.cancel(why),
  });
}

/**
 * The gunzipped bytes of `src`; the stream errors with ArchiveRefused once more than `maxBytes` came out (and stops
 * reading `src`), or when the gzip data is malformed or cut short.
 */
export function gunzipCapped(src: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  const inflated = sliced(src)
    .pipeThrough(new DecompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>)
    .getReader();
  let out = 0;
  const count = collector();
  return new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        let r: Awaited<ReturnType<typeof inflated.read>>;
        try {
          r = await inflated.read();
        } catch (e) {
          return c.error(gzipError(e));
        }
        if (r.done) return c.close();
        out += r.value.length;
        if (out > maxBytes) {
          inflated.cancel().catch(() => {});
          return c.error(new ArchiveRefused(null, overCap(maxBytes)));
        }
        count(r.value.length);
        c.enqueue(r.value);
      },
      cancel: (why) => inflated.cancel(why),
    },
    { highWaterMark: 0 },
  );
}

function gzipError(e: unknown): ArchiveRefused {
  if (e instanceof ArchiveRefused) return e;
  const text = String((e as Error)?.message ?? e).toLowerCase();
  return new ArchiveRefused(null, text.includes("unexpected end") ? "truncated gzip data" : "malformed gzip data");
}

/**
 * Look at the first bytes of a stream without losing them: `[head, stream]` where `stream` still yields everything.
 * `head` holds at least `n` bytes unless the stream is shorter.
 */
export async function peek(src: ReadableStream<Uint8Array>, n: number): Promise<[Uint8Array, ReadableStream<Uint8Array>]> {
  const reader = src.getReader();
  const got: Uint8Array[] = [];
  let len = 0;
  let done = false;
  while (len < n) {
    const r = await reader.read();
    if (r.done) {
      done = true;
      break;
    }
    got.push(r.value);
    len += r.value.length;
  }
  const head = new Uint8Array(len);
  let at = 0;
  for (const g of got) {
    head.set(g, at);
    at += g.length;
  }
  let first = len > 0;
  const rest = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (first) {
        first = false;
        return c.enqueue(head);
      }
      if (done) return c.close();
      const r = await reader.read();
      if (r.done) c.close();
      else c.enqueue(r.value);
    },
    cancel: (why) => reader.cancel(why),
  });
  return [head, rest];
}
