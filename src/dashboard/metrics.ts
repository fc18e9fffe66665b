/**
 * Pure parts of the metrics charts: ranges, the API's points turned into uPlot's columns (one time line shared by
 * every series, gaps as null so the line breaks), app totals, and value formats.
 */
import type { ContainerPoint } from "./types";

export const METRIC_RANGES = ["1h", "24h", "7d", "30d", "1y"] as const;
export type MetricRange = (typeof METRIC_RANGES)[number];

/** Words for headings and empty states ("in the last hour"). */
export const METRIC_RANGE_WORDS: Record<MetricRange, string> = {
  "1h": "hour",
  "24h": "24 hours",
  "7d": "7 days",
  "30d": "30 days",
  "1y": "year",
};

/** The raw tier (10 s samples) answers the last hour: refreshed at the collector's pace; coarser tiers change slowly. */
export function metricsPollMs(range: MetricRange): number {
  return range === "1h" ? 10_000 : 60_000;
}

/** The range of the URL's `range=`, or 1h. */
export function parseMetricRange(text: string | null): MetricRange {
  return (METRIC_RANGES as readonly string[]).includes(text ?? "") ? (text as MetricRange) : "1h";
}

/** A bucket width in words: "10 s", "5 min", "1 h". */
export function stepWords(seconds: number): string {
  return seconds >= 3600 ? `${seconds / 3600} h` : seconds >= 60 ? `${seconds / 60} min` : `${seconds} s`;
}

/** One line of a chart: its legend label, colour token 1 to 6 (`--chart-N`), dashed for limits. */
export interface ChartLine {
  label: string;
  tone: number;
  dash?: boolean;
}

/** A chart ready to draw: heading, accessible summary, columns, lines and the value format. */
export interface ChartSpec {
  id: string;
  title: string;
  label: string;
  data: Columns;
  lines: ChartLine[];
  format(v: number): string;
  /** A fixed top of the y axis (100 for a share of something). */
  yMax?: number;
}

/** One series of samples: time in ms and the value (null: no sample). */
export type Samples = Array<[t: number, v: number | null]>;

/** uPlot's data: x in seconds, then one column per series. */
export type Columns = [number[], ...Array<Array<number | null>>];

/**
 * Every series on one time line (seconds): the union of their times, null where a series has no value. Where the
 * time line jumps by more than 1.5 steps (buckets the server left out) a null row is put in, so lines break there
 * instead of bridging the hole.
 */
export function alignColumns(series: Samples[], stepSeconds: number): Columns {
  const times = new Set<number>();
  for (const s of series) for (const [t] of s) times.add(Math.floor(t / 1000));
  const sorted = [...times].sort((a, b) => a - b);
  const xs: number[] = [];
  const step = stepSeconds > 0 ? stepSeconds : 10;
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0 && sorted[i] - sorted[i - 1] > 1.5 * step) xs.push(sorted[i - 1] + step);
    xs.push(sorted[i]);
  }
  const index = new Map(xs.map((x, i) => [x, i]));
  const cols = series.map((s) => {
    const col: Array<number | null> = new Array(xs.length).fill(null);
    for (const [t, v] of s) col[index.get(Math.floor(t / 1000)) as number] = v;
    return col;
  });
  return [xs, ...cols];
}

/** The samples of one field of a container's points. */
export function samplesOf(points: ContainerPoint[], field: keyof Omit<ContainerPoint, "t">): Samples {
  return points.map((p) => [Date.parse(p.t), p[field]]);
}

/** Per time, the sum of the series that have a value there; null where none has. */
export function sumSamples(series: Samples[]): Samples {
  const at = new Map<number, number | null>();
  for (const s of series) {
    for (const [t, v] of s) {
      const cur = at.get(t) ?? null;
      at.set(t, v === null ? cur : (cur ?? 0) + v);
    }
  }
  return [...at.entries()].sort((a, b) => a[0] - b[0]);
}

/** Whether any series holds a value (a range with only gaps shows the empty state). */
export function hasValues(series: Samples[]): boolean {
  return series.some((s) => s.some(([, v]) => v !== null));
}

/** "sundeck-blog-web-1" -> "web-1": the compose project prefix says nothing on the app's own page. */
export function containerLabel(name: string, slug: string): string {
  const clean = name.replace(/^\//, "");
  for (const prefix of [`sundeck-${slug}-`, `sundeck-${slug}_`, `${slug}-`, `${slug}_`]) {
    if (clean.startsWith(prefix) && clean.length > prefix.length) return clean.slice(prefix.length);
  }
  return clean;
}

const dec1 = new Intl.NumberFormat("en", { maximumFractionDigits: 1 });
const dec2 = new Intl.NumberFormat("en", { maximumFractionDigits: 2 });

/** 12.345 -> "12.3%". */
export function formatPct(v: number): string {
  return `${Math.abs(v) < 10 ? dec2.format(v) : dec1.format(v)}%`;
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** Bytes in binary units: "512 B", "1.5 GiB". */
export function formatSize(n: number): string {
  let v = Math.abs(n);
  let i = 0;
  while (v >= 1024 && i < BYTE_UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  const s = v < 10 ? dec2.format(v) : i === 0 || v >= 100 ? String(Math.round(v)) : dec1.format(v);
  return `${n < 0 ? "-" : ""}${s} ${BYTE_UNITS[i]}`;
}

/** Bytes per second: "1.2 MiB/s". */
export function formatRate(n: number): string {
  return `${formatSize(n)}/s`;
}

/** Load average: "0.42". */
export function formatLoad(n: number): string {
  return dec2.format(n);
}

/** The last value that is not null, or null. */
export function lastValue(s: Samples): number | null {
  for (let i = s.length - 1; i >= 0; i--) if (s[i][1] !== null) return s[i][1];
  return null;
}

/** The largest value, or null when there is none. */
export function peakValue(s: Samples): number | null {
  let max: number | null = null;
  for (const [, v] of s) if (v !== null && (max === null || v > max)) max = v;
  return max;
}
