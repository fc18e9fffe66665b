/**
 * What the memory tests share to watch a child process from outside: its VmRSS, its stdout read a line at a time, and
 * the peak of its RSS sampled every 10 ms.
 */
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";

/** VmRSS of `pid` in MiB (0 once it is gone). */
export function rssMiB(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** The next line of the child's stdout each call; throws naming `what` when the child exits first. */
export function stdoutLines(proc: { stdout: ReadableStream<Uint8Array> }, what: string): () => Promise<string> {
  const lines = createInterface({ input: Readable.fromWeb(proc.stdout as never) })[Symbol.asyncIterator]();
  return async () => {
    const r = await lines.next();
    if (r.done) throw new Error(`${what} child exited early`);
    return r.value;
  };
}

/** The highest RSS of `pid` seen every 10 ms from `fromMiB` on, until `stop()`. */
export function peakRss(pid: number, fromMiB: number): { readonly peakMiB: number; stop(): void } {
  let peak = fromMiB;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMiB(pid));
  }, 10);
  return {
    get peakMiB() {
      return peak;
    },
    stop: () => clearInterval(timer),
  };
}
