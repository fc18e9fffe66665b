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

/** Longest log line kept, in characters: the rest is cut (a container writing megabytes without a newline). */
export const MAX_LOG_LINE = 32 * 1024;

/**
 * Turns bytes of one stream into complete lines (\n separated); `end()` flushes the last partial line. A line longer
 * than `maxLine` characters keeps its start and a note of how much was cut: what waits for a newline stays bounded
 * however long the writer goes without one.
 */
export class ByteLines {
  private readonly decoder = new TextDecoder();
  private partial = "";
  private cut = 0;

  constructor(private readonly maxLine = Number.POSITIVE_INFINITY) {}

  push(chunk: Uint8Array): string[] {
    const text = this.decoder.decode(chunk, { stream: true });
    const lines: string[] = [];
    for (let start = 0; ; ) {
      const nl = text.indexOf("\n", start);
      this.add(nl === -1 ? text.slice(start) : text.slice(start, nl));
      if (nl === -1) return lines;
      lines.push(this.take());
      start = nl + 1;
    }
  }

  end(): string[] {
    this.add(this.decoder.decode());
    return this.partial || this.cut ? [this.take()] : [];
  }

  private add(seg: string): void {
    const room = this.maxLine - this.partial.length;
    if (seg.length <= room) this.partial += seg;
    else {
      this.partial += seg.slice(0, room);
      this.cut += seg.length - room;
    }
  }

  private take(): string {
    const line = this.cut ? `${this.partial}…[${this.cut} characters cut]` : this.partial;
    this.partial = "";
    this.cut = 0;
    return line;
  }
}

/**
 * Decodes a log body into lines. Non-TTY containers send frames `[stream, 0, 0, 0, size(u32 BE)] payload`
 * (1 stdout, 2 stderr); TTY containers send raw bytes, all of it stdout. A frame's payload is decoded as it arrives,
 * not held until complete (a frame header may announce up to 4 GiB).
 */
export class LogDecoder {
  private readonly header = new Uint8Array(8);
  private headerLen = 0;
  /** Payload bytes of the current frame still to come. */
  private remaining = 0;
  private stream: "stdout" | "stderr" = "stdout";
  private readonly out = new ByteLines(MAX_LOG_LINE);
  private readonly err = new ByteLines(MAX_LOG_LINE);

  constructor(private readonly tty: boolean) {}

  push(chunk: Uint8Array): LogLine[] {
    if (this.tty) return this.out.push(chunk).map((l) => parseLogLine(l, "stdout"));
    const lines: LogLine[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining === 0) {
        const n = Math.min(8 - this.headerLen, chunk.length - i);
        this.header.set(chunk.subarray(i, i + n), this.headerLen);
        this.headerLen += n;
        i += n;
        if (this.headerLen < 8) break;
        const h = this.header;
        this.headerLen = 0;
        this.stream = h[0] === 2 ? "stderr" : "stdout";
        this.remaining = ((h[4] << 24) >>> 0) + (h[5] << 16) + (h[6] << 8) + h[7];
        continue;
      }
      const n = Math.min(this.remaining, chunk.length - i);
      const stream = this.stream;
      const target = stream === "stderr" ? this.err : this.out;
      for (const l of target.push(chunk.subarray(i, i + n))) lines.push(parseLogLine(l, stream));
      this.remaining -= n;
      i += n;
    }
    return lines;
  }

  /** What is left without a newline, marked `partial`. */
  end(): LogLine[] {
    const rest = [
      ...this.out.end().map((l) => parseLogLine(l, "stdout")),
      ...this.err.end().map((l) => parseLogLine(l, "stderr")),
    ];
    return rest.map((l) => ({ ...l, partial: true }));
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
