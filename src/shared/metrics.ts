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

/** One point of a container series; a gap (no sample in the bucket) has every value null. */
export interface ContainerPoint {
  t: string;
  /** Percent of one core (200 = two cores busy). */
  cpu_pct: number | null;
  /** Percent of the container's CPU limit; null without a limit. */
  cpu_limit_pct: number | null;
  mem_bytes: number | null;
  mem_limit_bytes: number | null;
  net_rx_bps: number | null;
  net_tx_bps: number | null;
  blk_read_bps: number | null;
  blk_write_bps: number | null;
  /** The bucket's maxima (equal to the values in the raw tier). */
  cpu_pct_max: number | null;
  mem_bytes_max: number | null;
  restarts: number | null;
}

/** GET /api/apps/{slug}/metrics?range= : one series per container (replicas apart). */
export interface AppMetrics {
  range: string;
  /** The tier answering: raw for up to an hour, 1m up to 24h, 5m up to a week, 1h beyond. */
  tier: string;
  step_seconds: number;
  from: string;
  to: string;
  containers: Array<{ id: string; name: string; service: string; points: ContainerPoint[] }>;
}

/** One point of the host series; a gap has every value null. */
export interface SystemPoint {
  t: string;
  /** Percent of the whole machine (100 = every core busy). */
  cpu_pct: number | null;
  cpu_pct_max: number | null;
  load1: number | null;
  load5: number | null;
  load15: number | null;
  mem_used_bytes: number | null;
  mem_total_bytes: number | null;
  swap_used_bytes: number | null;
  swap_total_bytes: number | null;
  /** Disk holding data_dir. */
  disk_free_bytes: number | null;
  disk_total_bytes: number | null;
  /** Disk holding the Docker root dir. */
  docker_disk_free_bytes: number | null;
  docker_disk_total_bytes: number | null;
  net_rx_bps: number | null;
  net_tx_bps: number | null;
}

/** GET /api/metrics/system?range= */
export interface SystemMetrics {
  range: string;
  tier: string;
  step_seconds: number;
  from: string;
  to: string;
  points: SystemPoint[];
}
