/**
 * The command runner compose goes through: Bun.spawn in its own process group, output streamed line by line,
 * cancellation and timeouts that take the whole group down (compose's children included).
 */
import { existsSync } from "node:fs";
import type { Log } from "../log/logger";
import type { CommandRunner, RunOptions, RunResult } from "./types";

/** Combined output kept for the result. */
const OUTPUT_LIMIT = 64 * 1024;
/** Between TERM and KILL. */
const KILL_GRACE_MS = 5000;
/** How long output may keep flowing from leftover children once the main process has exited. */
const DRAIN_AFTER_EXIT_MS = 1000;

// CSI and OSC escape sequences: output is shown as plain text lines.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

/** The environment a child gets when the caller passes none: enough to find binaries, nothing of the server's secrets. */
export function minimalEnv(from: Record<string, string | undefined> = process.env): Record<string, string> {
  return {
    PATH: from.PATH || "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: from.HOME || "/root",
    LANG: from.LANG || "C.UTF-8",
  };
}

/** A CommandRunner backed by Bun.spawn. */
export function createRunner(log?: Log): CommandRunner {
  return { run: (argv, opts) => run(argv, opts ?? {}, log) };
}

async function run(argv: string[], opts: RunOptions, log?: Log): Promise<RunResult> {
  const out = new OutputBuffer(OUTPUT_LIMIT);
  const emit = (line: string, stream: "stdout" | "stderr") => {
    out.push(line);
    try {
      opts.onLine?.(line, stream);
    } catch (e) {
      log?.warn("output line handler failed", { error: e });
    }
  };
  if (opts.signal?.aborted) return { code: 130, output: "", killed: true };

  const started = Date.now();
  let proc: Bun.Subprocess<any, "pipe", "pipe">;
  try {
    proc = Bun.spawn(argv, {
      cwd: opts.cwd,
      env: opts.env ?? minimalEnv(),
      stdin: opts.stdin !== undefined ? new TextEncoder().encode(opts.stdin) : "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const msg = spawnFailure(argv[0] ?? "", code, opts.cwd);
    emit(msg, "stderr");
    log?.debug("spawn failed", { cmd: argv[0], error: e });
    return { code: code === "EACCES" ? 126 : 127, output: out.text(), killed: false };
  }

  let killed = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const killGroup = (why: string) => {
    if (killed) return;
    killed = true;
    log?.debug("killing process group", { cmd: argv[0], pid: proc.pid, why });
    signalGroup(proc.pid, "SIGTERM");
    killTimer = setTimeout(() => signalGroup(proc.pid, "SIGKILL"), KILL_GRACE_MS);
  };
  const onAbort = () => killGroup("cancelled");
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const timeout =
    opts.timeoutMs && opts.timeoutMs > 0
      ? setTimeout(() => {
          emit(`command timed out after ${formatMs(opts.timeoutMs!)}, killed`, "stderr");
          killGroup("timeout");
        }, opts.timeoutMs)
      : undefined;

  const readers = [pump(proc.stdout, "stdout", emit), pump(proc.stderr, "stderr", emit)];
  const drained = Promise.all(readers.map((r) => r.done));
  const code = await proc.exited;
  clearTimeout(timeout);
  opts.signal?.removeEventListener("abort", onAbort);
  // A leftover child may keep a pipe open; do not wait for it forever once the main process is gone.
  const grace = killed ? KILL_GRACE_MS + 1000 : DRAIN_AFTER_EXIT_MS;
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([drained, new Promise((r) => (graceTimer = setTimeout(r, grace)))]);
  clearTimeout(graceTimer);
  for (const r of readers) r.stop();
  await drained;
  // Keep the KILL for stragglers of a cancelled group; drop it when the group is already gone.
  if (killTimer && !groupAlive(proc.pid)) clearTimeout(killTimer);
  log?.debug("command finished", { cmd: argv.slice(0, 3).join(" "), code, killed, ms: Date.now() - started });
  return { code, output: out.text(), killed };
}

/** Read a stream, decode it, and hand over each complete line; the last partial line is flushed at the end. */
function pump(
  stream: ReadableStream<Uint8Array>,
  name: "stdout" | "stderr",
  emit: (line: string, stream: "stdout" | "stderr") => void,
): { done: Promise<void>; stop: () => void } {
  const reader = stream.getReader();
  const split = new LineSplitter((line) => emit(line, name));
  const done = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        split.push(value);
      }
    } catch {
      // stopped or the pipe broke: what arrived is kept
    }
    split.end();
  })();
  return {
    done,
    stop: () => {
      reader.cancel().catch(() => {});
    },
  };
}

/**
 * Splits decoded bytes into lines. `\n` and `\r\n` end a line; a bare `\r` (progress redraw) also ends one so
 * progress shows live, but empty segments are dropped. ANSI escapes are removed.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder();
  private partial = "";
  /** The last line ended with a bare \r: an empty line right after it is the tail of a redraw, not output. */
  private afterCR = false;

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Uint8Array): void {
    this.feed(this.decoder.decode(chunk, { stream: true }));
  }

  end(): void {
    this.feed(this.decoder.decode());
    // a trailing \r held back in feed() is a line end, not the start of a \r\n pair
    if (this.partial.endsWith("\r")) this.partial = this.partial.slice(0, -1);
    if (this.partial) this.deliver(this.partial);
    this.partial = "";
  }

  private feed(text: string): void {
    if (!text) return;
    let buf = this.partial + text;
    let start = 0;
    for (let i = 0; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (c === 10) {
        const end = i > start && buf.charCodeAt(i - 1) === 13 ? i - 1 : i;
        if (end > start || !this.afterCR) this.deliver(buf.slice(start, end));
        this.afterCR = false;
        start = i + 1;
      } else if (c === 13 && i + 1 < buf.length && buf.charCodeAt(i + 1) !== 10) {
        if (i > start) this.deliver(buf.slice(start, i));
        this.afterCR = true;
        start = i + 1;
      }
    }
    buf = buf.slice(start);
    this.partial = buf;
  }

  private deliver(line: string): void {
    const clean = line.includes("\x1b") ? line.replace(ANSI, "") : line;
    if (clean.length === 0 && line.length > 0) return;
    this.onLine(clean);
  }
}

/** The last `limit` bytes of combined output (counted in UTF-16 units, close enough for logs), whole lines. */
class OutputBuffer {
  private lines: string[] = [];
  private head = 0;
  private size = 0;

  constructor(private readonly limit: number) {}

  push(line: string): void {
    this.lines.push(line);
    this.size += line.length + 1;
    while (this.size > this.limit && this.lines.length - this.head > 1) this.size -= this.lines[this.head++].length + 1;
    if (this.head > 1024 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
  }

  text(): string {
    const s = this.lines.slice(this.head).join("\n");
    return s.length > this.limit ? s.slice(s.length - this.limit) : s;
  }
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // the group is gone already
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function spawnFailure(cmd: string, code: string | undefined, cwd?: string): string {
  if (code === "ENOENT" && cwd && !existsSync(cwd)) return `cannot run ${cmd}: working directory ${cwd} does not exist`;
  if (code === "ENOENT") return `${cmd}: command not found`;
  if (code === "EACCES") return `${cmd}: permission denied`;
  return `cannot run ${cmd}: ${code ?? "spawn failed"}`;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
