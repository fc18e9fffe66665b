/** Wire shapes of request statistics (snake_case, as sent). */

/** One bucket of GET /api/apps/{slug}/request-stats (buckets without requests are left out). */
export interface StatsPoint {
  t: string;
  requests: number;
  rps: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  /** 5xx answers in the bucket. */
  errors: number;
}

/** GET /api/apps/{slug}/request-stats?range= */
export interface RequestStats {
  range: string;
  /** The metrics tier answering (its name, e.g. "raw", "1m"). */
  tier: string;
  /** Width of each bucket of `series`, in ms (the tier's resolution). */
  step_ms: number;
  from: string;
  to: string;
  requests: number;
  rps: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  bytes: number;
  status_codes: Record<string, number>;
  status_classes: Record<string, number>;
  top_paths: Array<{ path: string; count: number }>;
  series: StatsPoint[];
}
