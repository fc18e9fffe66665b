/**
 * Generated request bodies for streaming tests: pseudo-random bytes made chunk by chunk as they are read (never held
 * whole), with their sha256 known once read, and optionally an error after a given number of bytes.
 */

export interface Body {
  stream: ReadableStream<Uint8Array>;
  /** The sha256 (hex) of what was produced; call after the stream ended. */
  sha256(): string;
  /** Bytes produced so far. */
  produced(): number;
}

/** `total` bytes in chunks of `chunk` (64 KiB); `failAt`: the stream errors once that many bytes went out. */
export function generatedBody(total: number, opts: { chunk?: number; failAt?: number; seed?: number } = {}): Body {
  const chunk = opts.chunk ?? 64 * 1024;
  const hasher = new Bun.CryptoHasher("sha256");
  let sent = 0;
  let x = (opts.seed ?? 0x9e3779b9) >>> 0;
  let digest: string | undefined;
  return {
    stream: new ReadableStream<Uint8Array>(
      {
        pull(c) {
          if (opts.failAt !== undefined && sent >= opts.failAt) {
            c.error(new Error("source broke half-way"));
            return;
          }
          if (sent >= total) {
            c.close();
            return;
          }
          const n = Math.min(chunk, total - sent);
          const buf = new Uint8Array(n);
          const words = new Uint32Array(buf.buffer, 0, n >>> 2);
          for (let i = 0; i < words.length; i++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            words[i] = x >>> 0;
          }
          hasher.update(buf);
          sent += n;
          c.enqueue(buf);
        },
      },
      { highWaterMark: 0 },
    ),
    sha256: () => {
      digest ??= hasher.digest("hex");
      return digest;
    },
    produced: () => sent,
  };
}

/** Read a stream to its end, returning its sha256 and size (without keeping it). */
export async function digestOf(s: ReadableStream<Uint8Array>): Promise<{ sha256: string; size: number }> {
  const h = new Bun.CryptoHasher("sha256");
  let size = 0;
  for await (const c of s) {
    h.update(c);
    size += c.byteLength;
  }
  return { sha256: h.digest("hex"), size };
}
