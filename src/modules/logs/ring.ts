/**
 * The recent log lines of one container, bounded by count and bytes, and the time keys that order them. Docker
 * writes RFC 3339 with nanoseconds and trailing zeros trimmed, so raw strings do not sort: keys pad the fraction.
 */
import type { LogLine } from "../../docker/types";
import type { ContainerLogFrame } from "../../shared/apps";

/** A line as the hub keeps it: its sort key ("" without a timestamp) and its frame, encoded once for every follower. */
export interface HubLine extends LogLine {
  key: string;
  /** SPEC's container log frame as JSON text (`ts` only when the line has one). */
  json: string;
}

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/;

/** A sortable key of a Docker timestamp: UTC with a nine-digit fraction; "" when there is none. */
export function tsKey(ts: string | null): string {
  if (!ts) return "";
  const m = RFC3339.exec(ts);
  if (m) return `${m[1]}.${(m[2] ?? "").padEnd(9, "0")}Z`;
  const t = Date.parse(ts);
  return Number.isNaN(t) ? "" : unixKey(t / 1000);
}

/** The key of a unix time in seconds (millisecond precision). */
export function unixKey(seconds: number): string {
  const iso = new Date(seconds * 1000).toISOString();
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}000000Z`;
}

/** Unix seconds of a key (to the millisecond). */
export function keySeconds(key: string): number {
  return Date.parse(`${key.slice(0, 23)}Z`) / 1000;
}

/** A log line of the engine as the hub keeps it. */
export function hubLine(l: LogLine): HubLine {
  const frame: ContainerLogFrame = l.ts ? { ts: l.ts, stream: l.stream, line: l.line } : { stream: l.stream, line: l.line };
  return { ...l, key: tsKey(l.ts), json: JSON.stringify(frame) };
}

/** Recent lines, oldest first; the oldest go when either bound is passed. */
export class LineRing {
  private items: HubLine[] = [];
  private start = 0;
  private bytes = 0;
  /** Lines dropped to stay within bounds since the ring was made. */
  evicted = 0;

  constructor(
    private readonly maxLines: number,
    private readonly maxBytes: number,
  ) {}

  push(l: HubLine): void {
    this.items.push(l);
    this.bytes += l.json.length;
    while (this.items.length - this.start > this.maxLines || (this.bytes > this.maxBytes && this.size > 1)) {
      this.bytes -= this.items[this.start].json.length;
      this.start++;
      this.evicted++;
    }
    // compact now and then instead of shifting on every push
    if (this.start > 1024 && this.start * 2 > this.items.length) {
      this.items = this.items.slice(this.start);
      this.start = 0;
    }
  }

  get size(): number {
    return this.items.length - this.start;
  }

  /** Drop every line (a stopped feed lets go of them even while something still holds the feed). */
  clear(): void {
    this.items = [];
    this.start = 0;
    this.bytes = 0;
  }

  /** A copy of the lines, oldest first. */
  lines(): HubLine[] {
    return this.items.slice(this.start);
  }
}

/**
 * The newest `tail` lines at or after `sinceKey` ("" for no bound) of `lines`, when `lines` is known to hold all of
 * them: the whole log (`complete`), a line older than the bound, or `tail` lines already. Else null.
 */
export function fromRing(lines: HubLine[], complete: boolean, tail: number, sinceKey: string): HubLine[] | null {
  const wanted = sinceKey ? lines.filter((l) => l.key >= sinceKey) : lines;
  const coversSince = sinceKey !== "" && lines.length > 0 && lines[0].key !== "" && lines[0].key < sinceKey;
  if (!complete && !coversSince && wanted.length < tail) return null;
  return tail === 0 ? [] : wanted.slice(-tail);
}
