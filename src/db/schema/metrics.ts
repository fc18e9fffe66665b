/** Request statistics and container and host metrics per app, rolled up into the configured metrics tiers. */
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const requestStats = sqliteTable(
  "request_stats",
  {
    appSlug: text("app_slug").notNull(),
    /** Tier name from `metrics.tiers` (raw, 1m, 5m, 1h). */
    tier: text("tier").notNull(),
    /** Bucket start, ms since the epoch, aligned to the tier's resolution. */
    bucket: integer("bucket").notNull(),
    /** The merged StatsBatch of the bucket, JSON. */
    data: text("data").notNull(),
  },
  (t) => [primaryKey({ columns: [t.appSlug, t.tier, t.bucket] })],
);

/**
 * Container metrics per tier: a raw row per container every collection tick, each coarser tier's row written once
 * when its bucket has closed, from the finer tier. Rates are per second over the row's bucket; avg and max kept.
 */
export const containerMetrics = sqliteTable(
  "container_metrics",
  {
    tier: text("tier").notNull(),
    /** Bucket start, ms since the epoch, aligned to the tier's resolution. */
    bucket: integer("bucket").notNull(),
    containerId: text("container_id").notNull(),
    appSlug: text("app_slug").notNull(),
    service: text("service").notNull(),
    /** Raw samples the row stands for. */
    samples: integer("samples").notNull(),
    /** Percent of one core (200 = two cores busy). */
    cpuPct: real("cpu_pct"),
    cpuPctMax: real("cpu_pct_max"),
    /** Percent of the container's CPU limit; null without a limit. */
    cpuLimitPct: real("cpu_limit_pct"),
    memBytes: integer("mem_bytes"),
    memBytesMax: integer("mem_bytes_max"),
    /** Null without a memory limit. */
    memLimitBytes: integer("mem_limit_bytes"),
    netRxBps: real("net_rx_bps"),
    netRxBpsMax: real("net_rx_bps_max"),
    netTxBps: real("net_tx_bps"),
    netTxBpsMax: real("net_tx_bps_max"),
    blkReadBps: real("blk_read_bps"),
    blkReadBpsMax: real("blk_read_bps_max"),
    blkWriteBps: real("blk_write_bps"),
    blkWriteBpsMax: real("blk_write_bps_max"),
    /** The engine's restart count at the end of the bucket. */
    restarts: integer("restarts"),
  },
  (t) => [
    primaryKey({ columns: [t.tier, t.containerId, t.bucket] }),
    index("container_metrics_app").on(t.appSlug, t.tier, t.bucket),
    index("container_metrics_bucket").on(t.tier, t.bucket),
  ],
);

/** Host metrics per tier (CPU, load, memory, swap, disks of data_dir and the Docker root, network), as above. */
export const hostMetrics = sqliteTable(
  "host_metrics",
  {
    tier: text("tier").notNull(),
    bucket: integer("bucket").notNull(),
    samples: integer("samples").notNull(),
    cpuPct: real("cpu_pct"),
    cpuPctMax: real("cpu_pct_max"),
    load1: real("load1"),
    load5: real("load5"),
    load15: real("load15"),
    memUsedBytes: integer("mem_used_bytes"),
    memUsedBytesMax: integer("mem_used_bytes_max"),
    memTotalBytes: integer("mem_total_bytes"),
    swapUsedBytes: integer("swap_used_bytes"),
    swapTotalBytes: integer("swap_total_bytes"),
    /** Disk of data_dir. */
    diskFreeBytes: integer("disk_free_bytes"),
    diskTotalBytes: integer("disk_total_bytes"),
    /** Disk of the Docker root dir; null when it cannot be read. */
    dockerDiskFreeBytes: integer("docker_disk_free_bytes"),
    dockerDiskTotalBytes: integer("docker_disk_total_bytes"),
    netRxBps: real("net_rx_bps"),
    netRxBpsMax: real("net_rx_bps_max"),
    netTxBps: real("net_tx_bps"),
    netTxBpsMax: real("net_tx_bps_max"),
  },
  (t) => [primaryKey({ columns: [t.tier, t.bucket] })],
);

/** Names of the containers metrics were kept for, so a chart names a container that is gone; pruned with them. */
export const metricContainers = sqliteTable("metric_containers", {
  containerId: text("container_id").primaryKey(),
  appSlug: text("app_slug").notNull(),
  service: text("service").notNull(),
  /** Container name without the leading slash. */
  name: text("name").notNull(),
  /** Last time it was written, ms since the epoch (rewritten at most hourly while it runs). */
  lastSeen: integer("last_seen").notNull(),
});
