/**
 * The client's copy of the process log. Every (re)connect replays the server's buffer first; lines at or before
 * the last one we hold are skipped then, so a reconnect fills the gap without repeating what is on screen.
 */

/** A line with its arrival number (a stable key for rendering). */
export interface LogLine {
  n: number;
  text: string;
}

/** The leading RFC 3339 timestamp of a line, if any. */
export function timestampOf(line: string): string | null {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)\s/.exec(line);
  return m ? m[1] : null;
}

/** The level word of a line ("INFO", "WARN", ...), lower-cased; empty when there is none. */
export function levelOf(line: string): string {
  const m = /^\S+\s+(DEBUG|INFO|WARN|ERROR)\b/.exec(line);
  return m ? m[1].toLowerCase() : "";
}

/** A bounded, de-duplicating list of log lines. */
export class LogBuffer {
  lines: LogLine[] = [];
  private seq = 0;
  private cutoff: string | null = null;
  private atCutoff = new Set<string>();

  constructor(readonly max = 5000) {}

  /** A replay of the server's buffer follows (reconnect, or the REST snapshot). */
  resync(): void {
    const last = this.lines[this.lines.length - 1];
    this.cutoff = last ? timestampOf(last.text) : null;
    this.atCutoff = new Set();
    if (this.cutoff) {
      for (let i = this.lines.length - 1; i >= 0 && timestampOf(this.lines[i].text) === this.cutoff; i--) {
        this.atCutoff.add(this.lines[i].text);
      }
    }
  }

  /** Add one line; returns false when it was a repeat of a line we hold. */
  push(text: string): boolean {
    if (this.cutoff) {
      const ts = timestampOf(text);
      if (ts && (ts < this.cutoff || (ts === this.cutoff && this.atCutoff.has(text)))) return false;
      this.cutoff = null;
      this.atCutoff.clear();
    }
    this.lines.push({ n: ++this.seq, text });
    if (this.lines.length > this.max) this.lines.splice(0, this.lines.length - this.max);
    return true;
  }
}
