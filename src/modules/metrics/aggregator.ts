/**
 * Request statistics aggregated in memory per app and 10-second bucket (count, status codes and classes, latency
 * histogram, top normalised paths), handed out as batches for the flusher to store off the request path.
 * Memory is bounded: apps, pending buckets and paths per bucket are all capped.
 */
import type { Clock } from "../../lib/time";
import { systemClock } from "../../lib/time";
import type { RequestSample, StatsSink } from "../../proxy/types";
import { addHist, denseHist, HIST_BUCKETS, histIndex, newHist, percentiles, sparseHist } from "./histogram";
import { normalizePath } from "./paths";
import { RequestTotals } from "./totals";

export type StatusClass = "1xx" | "2xx" | "3xx" | "4xx" | "5xx";

/** One app's requests over one bucket, as handed to the flusher (plain JSON-able data). */
export interface StatsBatch {
  app: string;
  /** Bucket start, ms since the epoch. */
  start: number;
  durationMs: number;
  count: number;
  bytes: number;
  /** Count per status code (`"200"`). */
  statuses: Record<string, number>;
  classes: Record<StatusClass, number>;
  /** Latency histogram, sparse `{bucket index: count}` (see histogram.ts; `denseHist` expands it). */
  latency: Record<string, number>;
  /** Count per normalised path; `other` holds paths past the per-bucket cap. */
  paths: Record<string, number>;
}

/** What the request-stats API answers for a range. */
export interface StatsSummary {
  requests: number;
  /** Requests per second over the range. */
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  bytes: number;
  statuses: Record<string, number>;
  classes: Record<StatusClass, number>;
  topPaths: Array<{ path: string; count: number }>;
}

export interface RequestStatsOptions {
  clock?: Clock;
  /** Bucket length, ms (10 s). */
  bucketMs?: number;
  /** Most apps tracked at once (1000); samples of further apps are dropped. */
  maxApps?: number;
  /** Most distinct paths per app and bucket (200); the rest count as `other`. */
  maxPaths?: number;
  /** Most finished buckets waiting for drain across all apps (3000); the oldest of an app goes first. */
  maxPending?: number;
}

const CLASSES: StatusClass[] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

class Bucket {
  count = 0;
  bytes = 0;
  readonly statuses = new Map<number, number>();
  readonly hist = newHist();
  readonly paths = new Map<string, number>();
  other = 0;
  constructor(readonly start: number) {}
}

interface AppStats {
  current: Bucket | null;
  done: Bucket[];
}

/** The in-memory aggregator; the proxy sees it as its StatsSink. */
export class RequestStats implements StatsSink {
  private readonly apps = new Map<string, AppStats>();
  private readonly clock: Clock;
  readonly bucketMs: number;
  private readonly maxApps: number;
  private readonly maxPaths: number;
  private readonly maxPending: number;
  private pending = 0;
  /** Samples or buckets thrown away by the caps (for the process log). */
  dropped = 0;
  /** Counters since the process started, never drained (the Prometheus exposition reads them). */
  readonly totals: RequestTotals;

  constructor(opts: RequestStatsOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.bucketMs = opts.bucketMs ?? 10_000;
    this.maxApps = opts.maxApps ?? 1000;
    this.maxPaths = opts.maxPaths ?? 200;
    this.maxPending = opts.maxPending ?? 3000;
    this.totals = new RequestTotals(this.maxApps);
  }

  record(app: string, s: RequestSample): void {
    this.totals.record(app, s.status, s.ms, s.bytes);
    const now = this.clock.now();
    const start = now - (now % this.bucketMs);
    let a = this.apps.get(app);
    if (a === undefined) {
      if (this.apps.size >= this.maxApps) {
        this.dropped++;
        return;
      }
      a = { current: null, done: [] };
      this.apps.set(app, a);
    }
    let b = a.current;
    // a clock stepping back keeps filling the current bucket
    if (b === null || b.start < start) {
      if (b !== null) this.finish(a, b);
      b = a.current = new Bucket(start);
    }
    b.count++;
    if (s.bytes !== undefined && s.bytes > 0) b.bytes += s.bytes;
    b.statuses.set(s.status, (b.statuses.get(s.status) ?? 0) + 1);
    b.hist[histIndex(s.ms)]++;
    const path = normalizePath(s.path);
    const n = b.paths.get(path);
    if (n !== undefined) b.paths.set(path, n + 1);
    else if (b.paths.size < this.maxPaths) b.paths.set(path, 1);
    else b.other++;
  }

  /**
   * Take every finished bucket (and with `all`, the ones still filling, for shutdown). Apps left with nothing are
   * forgotten, so removed apps free their memory.
   */
  drain(opts: { all?: boolean } = {}): StatsBatch[] {
    const now = this.clock.now();
    const current = now - (now % this.bucketMs);
    const out: StatsBatch[] = [];
    for (const [app, a] of this.apps) {
      for (const b of a.done) out.push(this.batch(app, b));
      this.pending -= a.done.length;
      a.done = [];
      if (a.current !== null && (opts.all || a.current.start < current)) {
        out.push(this.batch(app, a.current));
        a.current = null;
      }
      if (a.current === null) this.apps.delete(app);
    }
    return out;
  }

  /** Apps currently tracked (for tests). */
  get size(): number {
    return this.apps.size;
  }

  private finish(a: AppStats, b: Bucket): void {
    if (this.pending >= this.maxPending) {
      this.dropped++;
      if (a.done.length === 0) return;
      a.done.shift();
      this.pending--;
    }
    a.done.push(b);
    this.pending++;
  }

  private batch(app: string, b: Bucket): StatsBatch {
    const statuses: Record<string, number> = {};
    const classes = emptyClasses();
    for (const [code, n] of b.statuses) {
      statuses[code] = n;
      const c = CLASSES[Math.floor(code / 100) - 1];
      if (c) classes[c] += n;
    }
    const paths: Record<string, number> = Object.fromEntries(b.paths);
    if (b.other > 0) paths.other = (paths.other ?? 0) + b.other;
    return {
      app,
      start: b.start,
      durationMs: this.bucketMs,
      count: b.count,
      bytes: b.bytes,
      statuses,
      classes,
      latency: sparseHist(b.hist),
      paths,
    };
  }
}

function emptyClasses(): Record<StatusClass, number> {
  return { "1xx": 0, "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0 };
}

function addCounts(dst: Record<string, number>, src: Record<string, number>): void {
  for (const [k, v] of Object.entries(src)) dst[k] = (dst[k] ?? 0) + v;
}

/**
 * Combine batches (of one app) into one covering their whole span, e.g. to roll 10 s buckets up into a coarser tier.
 * Path maps are merged and then capped to the `maxPaths` largest, the rest added to `other`.
 */
export function mergeBatches(batches: readonly StatsBatch[], maxPaths = 200): StatsBatch | null {
  if (batches.length === 0) return null;
  const start = Math.min(...batches.map((b) => b.start));
  const end = Math.max(...batches.map((b) => b.start + b.durationMs));
  const hist = new Array<number>(HIST_BUCKETS).fill(0);
  const out: StatsBatch = {
    app: batches[0].app,
    start,
    durationMs: end - start,
    count: 0,
    bytes: 0,
    statuses: {},
    classes: emptyClasses(),
    latency: {},
    paths: {},
  };
  for (const b of batches) {
    out.count += b.count;
    out.bytes += b.bytes;
    addCounts(out.statuses, b.statuses);
    addCounts(out.classes, b.classes);
    addCounts(out.paths, b.paths);
    addHist(hist, denseHist(b.latency));
  }
  out.latency = sparseHist(hist);
  const other = out.paths.other ?? 0;
  delete out.paths.other;
  const ranked = Object.entries(out.paths).sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
  const kept = ranked.slice(0, maxPaths);
  const rest = ranked.slice(maxPaths).reduce((n, [, c]) => n + c, other);
  out.paths = Object.fromEntries(kept);
  if (rest > 0) out.paths.other = rest;
  return out;
}

/** The request-stats answer for batches covering `rangeMs`: rate, percentiles, status breakdown and top paths. */
export function summarize(batches: readonly StatsBatch[], rangeMs: number, top = 10): StatsSummary {
  const m = mergeBatches(batches, Number.MAX_SAFE_INTEGER);
  if (m === null) {
    return { requests: 0, rps: 0, p50: 0, p95: 0, p99: 0, bytes: 0, statuses: {}, classes: emptyClasses(), topPaths: [] };
  }
  const [p50, p95, p99] = percentiles(denseHist(m.latency));
  const topPaths = Object.entries(m.paths)
    .filter(([p]) => p !== "other")
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
    .slice(0, top)
    .map(([path, count]) => ({ path, count }));
  return {
    requests: m.count,
    rps: rangeMs > 0 ? m.count / (rangeMs / 1000) : 0,
    p50,
    p95,
    p99,
    bytes: m.bytes,
    statuses: m.statuses,
    classes: m.classes,
    topPaths,
  };
}
