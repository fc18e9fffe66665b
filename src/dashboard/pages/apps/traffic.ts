/**
 * Pure parts of the Traffic tab: ranges, the bucket width of a stats answer, the series with the empty buckets filled
 * in (the server sends only buckets that saw requests), error rate and the status-class breakdown.
 */
import type { RequestStats } from "../../types";

export const RANGES = ["1h", "6h", "24h", "7d", "30d"] as const;
export type Range = (typeof RANGES)[number];
export const DEFAULT_RANGE: Range = "1h";

/** Refresh interval of the tab while the page is visible. */
export const TRAFFIC_POLL_MS = 10_000;

/** Words for the empty state ("in the last hour"). */
export const RANGE_WORDS: Record<Range, string> = {
  "1h": "hour",
  "6h": "6 hours",
  "24h": "24 hours",
  "7d": "7 days",
  "30d": "30 days",
};

/** The range of the URL's `range=`, or the default. */
export function parseRange(text: string | null): Range {
  return (RANGES as readonly string[]).includes(text ?? "") ? (text as Range) : DEFAULT_RANGE;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "10s", "5m", "1h" in milliseconds; null when it is not such a duration. */
export function durationMs(text: string): number | null {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  return m ? Number(m[1]) * UNITS[m[2]] : null;
}

/** The finest tier's resolution when its name says nothing ("raw"); the server's default. */
const RAW_BUCKET_MS = 10_000;

/**
 * Width of the answer's buckets: the server's `step_ms`; from an older server without it, the tier's name when it is
 * a resolution ("1m", "5m", "1h", the defaults), else the smallest gap between buckets, else the default raw width.
 */
export function bucketMs(stats: Pick<RequestStats, "tier" | "series"> & { step_ms?: number }): number {
  if (stats.step_ms && stats.step_ms > 0) return stats.step_ms;
  const named = durationMs(stats.tier);
  if (named && named > 0) return named;
  let gap = Number.POSITIVE_INFINITY;
  for (let i = 1; i < stats.series.length; i++) {
    const d = Date.parse(stats.series[i].t) - Date.parse(stats.series[i - 1].t);
    if (d > 0 && d < gap) gap = d;
  }
  return Number.isFinite(gap) ? gap : RAW_BUCKET_MS;
}

/** Most buckets drawn; past it the series is drawn as sent. */
const MAX_FILLED = 5000;

/** The series as evenly spaced buckets: requests per second 0 and no latency where nothing was counted. */
export interface Filled {
  from: number;
  to: number;
  step: number;
  t: number[];
  rps: number[];
  p50: Array<number | null>;
  p95: Array<number | null>;
  p99: Array<number | null>;
}

/** Spread the answer's buckets over [from, to], filling the gaps. */
export function fillSeries(stats: RequestStats): Filled {
  const from = Date.parse(stats.from);
  const to = Date.parse(stats.to);
  const step = bucketMs(stats);
  const out: Filled = { from, to, step, t: [], rps: [], p50: [], p95: [], p99: [] };
  const n = Math.ceil((to - from) / step);
  if (!(n > 0) || n > MAX_FILLED) {
    for (const p of stats.series) {
      out.t.push(Date.parse(p.t));
      out.rps.push(p.rps);
      out.p50.push(p.p50_ms);
      out.p95.push(p.p95_ms);
      out.p99.push(p.p99_ms);
    }
    return out;
  }
  const at = new Map<number, RequestStats["series"][number]>();
  for (const p of stats.series) at.set(Math.floor((Date.parse(p.t) - from) / step), p);
  for (let i = 0; i < n; i++) {
    const p = at.get(i);
    out.t.push(from + i * step);
    out.rps.push(p?.rps ?? 0);
    out.p50.push(p ? p.p50_ms : null);
    out.p95.push(p ? p.p95_ms : null);
    out.p99.push(p ? p.p99_ms : null);
  }
  return out;
}

/** Share of answers that were server errors (5xx), 0 to 1. */
export function errorRate(stats: Pick<RequestStats, "requests" | "status_classes">): number {
  return stats.requests > 0 ? (stats.status_classes["5xx"] ?? 0) / stats.requests : 0;
}

export interface StatusBar {
  cls: string;
  count: number;
  share: number;
}

/** 2xx to 5xx always (1xx and others when present), in order, with their share of all requests. */
export function statusBars(stats: Pick<RequestStats, "requests" | "status_classes">): StatusBar[] {
  const seen = Object.keys(stats.status_classes).filter((k) => (stats.status_classes[k] ?? 0) > 0);
  const classes = new Set(["2xx", "3xx", "4xx", "5xx", ...seen]);
  const total = stats.requests || Object.values(stats.status_classes).reduce((a, b) => a + b, 0);
  return [...classes].sort().map((cls) => {
    const count = stats.status_classes[cls] ?? 0;
    return { cls, count, share: total > 0 ? count / total : 0 };
  });
}

const int = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const dec = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

/** 1234 -> "1,234"; small fractions keep two decimals ("0.05"). */
export function formatNumber(n: number): string {
  return Math.abs(n) >= 100 ? int.format(n) : dec.format(n);
}

/** Milliseconds: "0.8 ms", "12 ms", "1,250 ms". */
export function formatMs(n: number): string {
  return `${formatNumber(n)} ms`;
}

/** 0.0123 -> "1.23%". */
export function formatPercent(share: number): string {
  return `${dec.format(share * 100)}%`;
}

/** Bytes as KiB, MiB, GiB. */
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? int.format(v) : dec.format(v)} ${units[i]}`;
}
