/**
 * The stream a target stores: the caller's bytes passed through unchanged while they are hashed (sha256) and counted,
 * progress reported at most every `everyMs`, and the stream errored as soon as the operation's signal aborts.
 */
import type { OpControl } from "../types";

/** What a metered stream saw once it ended. */
export interface Metered {
  stream: ReadableStream<Uint8Array>;
  /** Bytes passed so far. */
  bytes(): number;
  /** The sha256 (hex) of every byte passed; call after the stream ended. */
  sha256(): string;
  /** Stop: error the stream and cancel the source, even while a consumer holds the stream locked. */
  stop(reason: unknown): Promise<void>;
}

/** The error a cancelled operation ends with: the signal's reason when it is an Error. */
export function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error && signal.reason.name !== "AbortError" ? signal.reason : new Error("cancelled");
}

/** Wrap `src` so reading it hashes, counts and reports progress, and cancellation errors it mid-read. */
export function meter(
  src: ReadableStream<Uint8Array>,
  ctl: OpControl,
  opts: { everyMs?: number; now?: () => number } = {},
): Metered {
  const hasher = new Bun.CryptoHasher("sha256");
  const now = opts.now ?? (() => performance.now());
  const everyMs = opts.everyMs ?? 250;
  let size = 0;
  let lastReport = Number.NEGATIVE_INFINITY;
  let digest: string | undefined;
  let ended = false;
  const reader = src.getReader();
  const report = (force: boolean) => {
    if (!ctl.progress) return;
    const t = now();
    if (!force && t - lastReport < everyMs) return;
    lastReport = t;
    ctl.progress(size);
  };
  const signal = ctl.signal;
  let onAbort: (() => void) | undefined;
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        if (!signal) return;
        onAbort = () => {
          if (ended) return;
          ended = true;
          const err = abortError(signal);
          c.error(err);
          reader.cancel(err).catch(() => {});
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      },
      async pull(c) {
        let step: Awaited<ReturnType<typeof reader.read>>;
        try {
          step = await reader.read();
        } catch (e) {
          ended = true;
          if (onAbort) signal?.removeEventListener("abort", onAbort);
          throw e;
        }
        const { done, value } = step;
        if (ended) return;
        if (done) {
          ended = true;
          report(true);
          if (onAbort) signal?.removeEventListener("abort", onAbort);
          c.close();
          return;
        }
        hasher.update(value);
        size += value.byteLength;
        report(false);
        c.enqueue(value);
      },
      cancel(reason) {
        ended = true;
        if (onAbort) signal?.removeEventListener("abort", onAbort);
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    bytes: () => size,
    sha256: () => {
      digest ??= hasher.digest("hex");
      return digest;
    },
    stop: async (reason) => {
      if (onAbort) signal?.removeEventListener("abort", onAbort);
      if (!ended) {
        ended = true;
        try {
          controller?.error(reason);
        } catch {
          // already closed or errored
        }
      }
      await reader.cancel(reason).catch(() => {});
    },
  };
}
