/**
 * The client's copy of a container log stream. Every (re)connect sends the history tail again; lines at or before the
 * newest timestamp we hold are skipped then, so a reconnect fills the gap without repeating what is on screen.
 */
import type { ContainerLogFrame } from "../../types";

/** A line with its arrival number (a stable key for rendering). */
export interface ContainerLine {
  n: number;
  ts: string;
  stream: "stdout" | "stderr";
  line: string;
}

/** An RFC 3339 time as a string that sorts in time order (fraction padded to nanoseconds); "" when absent. */
export function sortableTs(ts: string | undefined): string {
  if (!ts) return "";
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (!m) return ts;
  const base = m[3] === "Z" ? m[1] : new Date(`${m[1]}${m[3]}`).toISOString().slice(0, 19);
  return `${base}.${(m[2] ?? "").padEnd(9, "0").slice(0, 9)}`;
}

/** A bounded, de-duplicating list of container log lines. */
export class ContainerLogBuffer {
  lines: ContainerLine[] = [];
  private seq = 0;
  private cutoff = "";
  private atCutoff = new Set<string>();

  constructor(readonly max = 5000) {}

  /** A replay of the history follows (reconnect). */
  resync(): void {
    const last = this.lines[this.lines.length - 1];
    this.cutoff = last ? sortableTs(last.ts) : "";
    this.atCutoff = new Set();
    for (let i = this.lines.length - 1; i >= 0 && this.cutoff && sortableTs(this.lines[i].ts) === this.cutoff; i--) {
      this.atCutoff.add(this.lines[i].stream + this.lines[i].line);
    }
  }

  /** Add a frame's line; false when it repeats one we hold (or is not a line). */
  push(f: ContainerLogFrame): boolean {
    if (typeof f.line !== "string") return false;
    const stream = f.stream === "stderr" ? "stderr" : "stdout";
    if (this.cutoff) {
      const ts = sortableTs(f.ts);
      if (ts && (ts < this.cutoff || (ts === this.cutoff && this.atCutoff.has(stream + f.line)))) return false;
      if (ts) {
        this.cutoff = "";
        this.atCutoff.clear();
      }
    }
    this.lines.push({ n: ++this.seq, ts: f.ts ?? "", stream, line: f.line });
    if (this.lines.length > this.max) this.lines.splice(0, this.lines.length - this.max);
    return true;
  }

  /** Forget everything (new query). */
  clear(): void {
    this.lines = [];
    this.cutoff = "";
    this.atCutoff.clear();
  }
}
