/**
 * The one process logger. Every line is sanitised, written to stdout and kept in a ring buffer that the
 * process-logs route and stream read; subscribers get each line as it is written.
 */
import { sanitizeLine } from "./sanitize";

export type Level = "debug" | "info" | "warn" | "error";

/** Fields appended to a message as key=value. */
export type Fields = Record<string, unknown>;

/** A component-tagged logger. */
export interface Log {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  /** A logger for a sub-component, sharing the same sink. */
  child(component: string): Log;
}

export interface LogSinkOptions {
  /** Lines kept in memory; oldest dropped first. */
  capacity?: number;
  /** Write to stdout (tests turn it off). */
  stdout?: boolean;
  /** Lowest level written. */
  level?: Level;
}

const LEVELS: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Where every line goes: stdout, the ring buffer, the live subscribers. */
export class LogSink {
  private readonly lines: string[];
  private start = 0;
  private count = 0;
  private readonly subscribers = new Set<(line: string) => void>();
  readonly capacity: number;
  private readonly stdout: boolean;
  private readonly minLevel: number;

  constructor(opts: LogSinkOptions = {}) {
    this.capacity = opts.capacity ?? 2000;
    this.lines = new Array(this.capacity);
    this.stdout = opts.stdout ?? true;
    this.minLevel = LEVELS[opts.level ?? "info"];
  }

  /** Write one line: timestamp, level, component tag, message. */
  write(level: Level, component: string, msg: string, fields?: Fields): void {
    if (LEVELS[level] < this.minLevel) return;
    const line = sanitizeLine(
      `${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} [${component}] ${msg}${formatFields(fields)}`,
    );
    const i = (this.start + this.count) % this.capacity;
    this.lines[i] = line;
    if (this.count < this.capacity) this.count++;
    else this.start = (this.start + 1) % this.capacity;
    if (this.stdout) process.stdout.write(`${line}\n`);
    for (const fn of this.subscribers) {
      try {
        fn(line);
      } catch {
        // a failing subscriber must not break logging
      }
    }
  }

  /** Buffered lines, oldest first. */
  snapshot(): string[] {
    const out = new Array<string>(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.lines[(this.start + i) % this.capacity];
    return out;
  }

  /** Receive every later line; returns the unsubscribe function. */
  subscribe(fn: (line: string) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  /** A logger writing here under `component`. */
  logger(component: string): Log {
    return {
      debug: (m, f) => this.write("debug", component, m, f),
      info: (m, f) => this.write("info", component, m, f),
      warn: (m, f) => this.write("warn", component, m, f),
      error: (m, f) => this.write("error", component, m, f),
      child: (c) => this.logger(c),
    };
  }
}

function formatFields(fields?: Fields): string {
  if (!fields) return "";
  let out = "";
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    const text = v instanceof Error ? v.message : typeof v === "string" ? v : JSON.stringify(v);
    out += ` ${k}=${/[\s"=]/.test(text) || text === "" ? JSON.stringify(text) : text}`;
  }
  return out;
}
