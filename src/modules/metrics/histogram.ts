/**
 * A log-spaced latency histogram: buckets grow by 8% from 0.1 ms to 60 s, so any percentile read back as its bucket's
 * geometric middle is within 4% of the true value. Counts only: recording is one Math.log and one increment.
 */

/** Smallest latency with its own bucket (ms); below it goes to bucket 0. */
export const HIST_MIN_MS = 0.1;
/** Largest latency with its own bucket (ms); above it goes to the last bucket. */
export const HIST_MAX_MS = 60_000;
/** Ratio between consecutive bucket bounds. */
export const HIST_GROWTH = 1.08;

const LOG_GROWTH = Math.log(HIST_GROWTH);
const SPAN = Math.ceil(Math.log(HIST_MAX_MS / HIST_MIN_MS) / LOG_GROWTH);
/** Number of buckets: underflow, SPAN log-spaced ones, overflow. */
export const HIST_BUCKETS = SPAN + 2;

/** Bucket index of a latency in ms. */
export function histIndex(ms: number): number {
  if (!(ms >= HIST_MIN_MS)) return 0;
  if (ms >= HIST_MAX_MS) return HIST_BUCKETS - 1;
  return 1 + Math.min(SPAN - 1, Math.floor(Math.log(ms / HIST_MIN_MS) / LOG_GROWTH));
}

/** The value a bucket stands for: its geometric middle (the bounds for the under- and overflow buckets). */
export function histValue(index: number): number {
  if (index <= 0) return HIST_MIN_MS;
  if (index >= HIST_BUCKETS - 1) return HIST_MAX_MS;
  return HIST_MIN_MS * HIST_GROWTH ** (index - 1) * Math.sqrt(HIST_GROWTH);
}

/** A fresh, empty histogram. */
export function newHist(): Uint32Array {
  return new Uint32Array(HIST_BUCKETS);
}

/**
 * Latencies (ms) at the given quantiles (0..1) of a histogram (dense counts by bucket); 0 for an empty one.
 * Uses the nearest-rank definition.
 */
export function percentiles(hist: ArrayLike<number>, qs: readonly number[] = [0.5, 0.95, 0.99]): number[] {
  let total = 0;
  for (let i = 0; i < hist.length; i++) total += hist[i];
  if (total === 0) return qs.map(() => 0);
  const ranks = qs.map((q) => Math.max(1, Math.ceil(Math.min(1, Math.max(0, q)) * total)));
  const out = new Array<number>(qs.length).fill(histValue(hist.length - 1));
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    if (hist[i] === 0) continue;
    const before = seen;
    seen += hist[i];
    for (let k = 0; k < ranks.length; k++) if (ranks[k] > before && ranks[k] <= seen) out[k] = histValue(i);
  }
  return out;
}

/** Add `src` into `dst` (both dense). */
export function addHist(dst: number[] | Uint32Array, src: ArrayLike<number>): void {
  for (let i = 0; i < src.length && i < dst.length; i++) dst[i] += src[i];
}

/** A dense histogram as `{index: count}` of its non-empty buckets (compact for storage). */
export function sparseHist(hist: ArrayLike<number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < hist.length; i++) if (hist[i] > 0) out[i] = hist[i];
  return out;
}

/** The dense histogram of a sparse one. */
export function denseHist(sparse: Record<string, number>): number[] {
  const out = new Array<number>(HIST_BUCKETS).fill(0);
  for (const [k, v] of Object.entries(sparse)) {
    const i = Number(k);
    if (Number.isInteger(i) && i >= 0 && i < HIST_BUCKETS) out[i] += v;
  }
  return out;
}
