/**
 * Request counters per app since the process started, for the Prometheus exposition: requests by status class,
 * response bytes, and a latency histogram on fixed bounds. Unlike the 10-second buckets of the aggregator these are
 * never drained: Prometheus wants counters that only grow (a restart is a reset it understands). Recording is a map
 * lookup and a few increments into arrays allocated once per app.
 */

/** Upper bounds of the exposition's latency buckets, seconds (the `+Inf` bucket is implicit). */
export const LATENCY_BOUNDS_S: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const BOUNDS_MS = LATENCY_BOUNDS_S.map((s) => s * 1000);

/** The status classes counted, in order of `AppTotals.classes`. */
export const TOTAL_CLASSES = ["1xx", "2xx", "3xx", "4xx", "5xx"] as const;

/** One app's counters. */
export interface AppTotals {
  /** Requests answered, whatever the status. */
  count: number;
  /** Requests per status class (index 0 = 1xx ... 4 = 5xx); a status outside 100..599 counts in none. */
  readonly classes: Float64Array;
  /** Response body bytes, when the proxy knew them. */
  bytes: number;
  /** Requests per latency bucket, not cumulative: index i counts `LATENCY_BOUNDS_S[i-1] < s <= LATENCY_BOUNDS_S[i]`, the last index the rest. */
  readonly buckets: Float64Array;
  /** Sum of the latencies, ms. */
  sumMs: number;
}

/** Counters per app; at most `maxApps` apps are kept (samples of further apps are not counted). */
export class RequestTotals {
  private readonly apps = new Map<string, AppTotals>();

  constructor(private readonly maxApps = 1000) {}

  /** Count one answered request. */
  record(app: string, status: number, ms: number, bytes: number | undefined): void {
    let a = this.apps.get(app);
    if (a === undefined) {
      if (this.apps.size >= this.maxApps) return;
      a = {
        count: 0,
        classes: new Float64Array(TOTAL_CLASSES.length),
        bytes: 0,
        buckets: new Float64Array(BOUNDS_MS.length + 1),
        sumMs: 0,
      };
      this.apps.set(app, a);
    }
    a.count++;
    const c = Math.floor(status / 100) - 1;
    if (c >= 0 && c < TOTAL_CLASSES.length) a.classes[c]++;
    if (bytes !== undefined && bytes > 0) a.bytes += bytes;
    // not Math.max: a NaN latency must count as 0 too, or the sum turns NaN for good
    // biome-ignore lint/complexity/useMathMinMax: see above
    const v = ms >= 0 ? ms : 0;
    let i = 0;
    while (i < BOUNDS_MS.length && v > BOUNDS_MS[i]) i++;
    a.buckets[i]++;
    a.sumMs += v;
  }

  /** Every app's counters (live objects: read them, do not keep them). */
  entries(): IterableIterator<[string, AppTotals]> {
    return this.apps.entries();
  }
}
