/**
 * Timing helpers for the benchmarks: run an operation under an iteration and time budget, summarise the samples as
 * percentiles, and render plain-text tables.
 */

/** Percentiles of one series of samples, in milliseconds. */
export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** How long and how often to run an operation. */
export interface Budget {
  /** Untimed calls made first (JIT, statement cache, page cache). */
  warmup: number;
  /** Timed calls wanted. */
  iterations: number;
  /** Stop early once the timed calls have taken this long in total... */
  maxMs: number;
  /** ...but never before this many timed calls. */
  minIterations: number;
}

/** Elapsed milliseconds of `fn`, with its result. */
export function timed<T>(fn: () => T): { ms: number; value: T } {
  const t0 = Bun.nanoseconds();
  const value = fn();
  return { ms: (Bun.nanoseconds() - t0) / 1e6, value };
}

/** Nearest-rank percentile of ascending `sorted`. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Summarise samples (milliseconds). */
export function summarize(samples: readonly number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99), max: s[s.length - 1] };
}

/** The spread of a small series (whole runs rather than many calls), in milliseconds. */
export interface Spread {
  n: number;
  min: number;
  median: number;
  mean: number;
  p90: number;
  max: number;
}

/** Summarise a small series; the median of an even count is the mean of the middle two. */
export function spread(samples: readonly number[]): Spread {
  const s = [...samples].sort((a, b) => a - b);
  const n = s.length;
  const median = n === 0 ? Number.NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  const mean = n === 0 ? Number.NaN : s.reduce((a, b) => a + b, 0) / n;
  return { n, min: s[0] ?? Number.NaN, median, mean, p90: percentile(s, 90), max: s[n - 1] ?? Number.NaN };
}

/** Warm `op` up, then time single calls of it within `budget`. */
export function measure(op: () => unknown, budget: Budget): Summary {
  const warmEnd = performance.now() + budget.maxMs / 4;
  for (let i = 0; i < budget.warmup && performance.now() < warmEnd; i++) op();
  const samples: number[] = [];
  let spent = 0;
  while (samples.length < budget.iterations && (spent < budget.maxMs || samples.length < budget.minIterations)) {
    const { ms } = timed(op);
    samples.push(ms);
    spent += ms;
  }
  return summarize(samples);
}

/** Milliseconds with a precision that suits their size. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "-";
  if (ms < 1) return ms.toFixed(3);
  if (ms < 100) return ms.toFixed(2);
  return ms.toFixed(0);
}

/** Bytes as MiB. */
export function fmtMiB(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}

/** Render rows as an aligned table; columns listed in `right` are right-aligned. */
export function table(head: readonly string[], rows: readonly (readonly string[])[], right: ReadonlySet<number>): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ");
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}
