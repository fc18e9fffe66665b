/**
 * Decoding the engine's streaming bodies: the multiplexed stdout/stderr log stream (8-byte frame headers), raw TTY
 * log streams, timestamped log lines, and newline-delimited JSON (events).
 */
import type { LogLine } from "./types";

const TS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))(?: |$)/;

/** Split Docker's `timestamps=1` prefix off a line; a trailing \r (TTY output) is dropped. */
export function parseLogLine(raw: string, stream: "stdout" | "stderr"): LogLine {
  const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  const m = TS.exec(text);
  if (!m) return { ts: null, stream, line: text };
  return { ts: m[1], stream, line: text.slice(m[0].length) };
}

/** Turns bytes of one stream into complete lines (\n separated); `end()` flushes the last partial line. */
export class ByteLines {
  private readonly decoder = new TextDecoder();
  private partial = "";

  push(chunk: Uint8Array): string[] {
    const text = this.partial + this.decoder.decode(chunk, { stream: true });
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    return parts;
  }

  end(): string[] {
    const rest = this.partial + this.decoder.decode();
    this.partial = "";
    return rest ? [rest] : [];
  }
}

/**
 * Decodes a log body into lines. Non-TTY containers send frames `[stream, 0, 0, 0, size(u32 BE)] payload`
 * (1 stdout, 2 stderr); TTY containers send raw bytes, all of it stdout.
 */
export class LogDecoder {
  private pending = new Uint8Array(0);
  private readonly out = new ByteLines();
  private readonly err = new ByteLines();

  constructor(private readonly tty: boolean) {}

  push(chunk: Uint8Array): LogLine[] {
    if (this.tty) return this.out.push(chunk).map((l) => parseLogLine(l, "stdout"));
    const lines: LogLine[] = [];
    let buf = this.pending.length ? concat(this.pending, chunk) : chunk;
    while (buf.length >= 8) {
      const size = ((buf[4] << 24) >>> 0) + (buf[5] << 16) + (buf[6] << 8) + buf[7];
      if (buf.length < 8 + size) break;
      const payload = buf.subarray(8, 8 + size);
      const stream = buf[0] === 2 ? "stderr" : "stdout";
      const target = stream === "stderr" ? this.err : this.out;
      for (const l of target.push(payload)) lines.push(parseLogLine(l, stream));
      buf = buf.subarray(8 + size);
    }
    this.pending = buf.length ? buf.slice() : new Uint8Array(0);
    return lines;
  }

  end(): LogLine[] {
    return [...this.out.end().map((l) => parseLogLine(l, "stdout")), ...this.err.end().map((l) => parseLogLine(l, "stderr"))];
  }
}

/** Newline-delimited JSON objects (the events stream); blank or broken lines are skipped. */
export class JsonLines {
  private readonly lines = new ByteLines();

  push(chunk: Uint8Array): any[] {
    return this.lines.push(chunk).flatMap(parse);
  }

  end(): any[] {
    return this.lines.end().flatMap(parse);
  }
}

function parse(line: string): any[] {
  const s = line.trim();
  if (!s) return [];
  try {
    return [JSON.parse(s)];
  } catch {
    return [];
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
