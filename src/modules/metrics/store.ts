/**
 * Container and host metrics rows: one table description per kind (which column holds what and how a coarser bucket
 * derives it from finer rows), the raw write of a tick into the finest tier, and the raw samples read back for the
 * alert evaluator. Rollups (rollup.ts) and range queries (query.ts) build their SQL from the same descriptions.
 */
import type { Db } from "../../db";
import type { Tier } from "./request-stats";
import type { ContainerSample, HostSample, Tick } from "./samples";

/** How a coarser bucket gets a column: average weighted by samples, maximum of maxima, or the last row's value. */
export type Agg = "avg" | "avgInt" | "max" | "last";

/** One value column: its SQL name, its aggregation, and the sample field it is read from and back into. */
export interface Col {
  col: string;
  agg: Agg;
  field: string;
}

/** A metrics table: its name, the key column besides tier and bucket (the container id), its value columns. */
export interface TableSpec {
  table: "container_metrics" | "host_metrics";
  key: "container_id" | null;
  cols: Col[];
}

const avgMax = (col: string, field: string, int = false): Col[] => [
  { col, agg: int ? "avgInt" : "avg", field },
  { col: `${col}_max`, agg: "max", field },
];

export const CONTAINERS: TableSpec = {
  table: "container_metrics",
  key: "container_id",
  cols: [
    { col: "app_slug", agg: "last", field: "app" },
    { col: "service", agg: "last", field: "service" },
    ...avgMax("cpu_pct", "cpuPct"),
    { col: "cpu_limit_pct", agg: "avg", field: "cpuLimitPct" },
    ...avgMax("mem_bytes", "memBytes", true),
    { col: "mem_limit_bytes", agg: "last", field: "memLimitBytes" },
    ...avgMax("net_rx_bps", "netRxBps"),
    ...avgMax("net_tx_bps", "netTxBps"),
    ...avgMax("blk_read_bps", "blkReadBps"),
    ...avgMax("blk_write_bps", "blkWriteBps"),
    { col: "restarts", agg: "last", field: "restarts" },
  ],
};

export const HOSTS: TableSpec = {
  table: "host_metrics",
  key: null,
  cols: [
    ...avgMax("cpu_pct", "cpuPct"),
    { col: "load1", agg: "avg", field: "load1" },
    { col: "load5", agg: "avg", field: "load5" },
    { col: "load15", agg: "avg", field: "load15" },
    ...avgMax("mem_used_bytes", "memUsedBytes", true),
    { col: "mem_total_bytes", agg: "last", field: "memTotalBytes" },
    { col: "swap_used_bytes", agg: "avgInt", field: "swapUsedBytes" },
    { col: "swap_total_bytes", agg: "last", field: "swapTotalBytes" },
    { col: "disk_free_bytes", agg: "avgInt", field: "diskFreeBytes" },
    { col: "disk_total_bytes", agg: "last", field: "diskTotalBytes" },
    { col: "docker_disk_free_bytes", agg: "avgInt", field: "dockerDiskFreeBytes" },
    { col: "docker_disk_total_bytes", agg: "last", field: "dockerDiskTotalBytes" },
    ...avgMax("net_rx_bps", "netRxBps"),
    ...avgMax("net_tx_bps", "netTxBps"),
  ],
};

/** Integer columns get whole numbers (a sample's bytes may come as a float from a rate or a division). */
const INT_COL = /bytes|restarts/;

/** Weighted average over the rows where the column is set (a row's null does not drag the average down). */
function weighted(c: string): string {
  return `SUM(${c} * samples) * 1.0 / SUM(CASE WHEN ${c} IS NOT NULL THEN samples END)`;
}

/**
 * SELECT of the rows a coarser tier gets from `$finer` rows in [`$from`, `$to`), one per bucket of `$res` ms (and
 * per container): columns `bucket`, the key, `samples`, then every value column. With `app`, one app's containers.
 * The "last" columns come from the group's newest row (joined back on its bucket).
 */
export function aggregateSql(t: TableSpec, opts: { app?: boolean } = {}): { cte: string; select: string } {
  const k = t.key;
  const aggs = t.cols
    .filter((c) => c.agg !== "last")
    .map((c) => {
      const e = c.agg === "max" ? `MAX(${c.col})` : weighted(c.col);
      return `${c.agg === "avgInt" ? `CAST(ROUND(${e}) AS INTEGER)` : e} AS ${c.col}`;
    });
  const where = `tier = $finer AND bucket >= $from AND bucket < $to${opts.app ? " AND app_slug = $app" : ""}`;
  const cte =
    `WITH g AS (SELECT ${k ? `${k} AS k, ` : ""}bucket - (bucket % $res) AS b, MAX(bucket) AS lastb, ` +
    `SUM(samples) AS n, ${aggs.join(", ")} FROM ${t.table} WHERE ${where} GROUP BY ${k ? "k, " : ""}b)`;
  const values = t.cols.map((c) => (c.agg === "last" ? `l.${c.col}` : `g.${c.col}`));
  const select =
    `SELECT g.b AS bucket, ${k ? "g.k AS k, " : ""}g.n AS samples, ${values.join(", ")} FROM g ` +
    `JOIN ${t.table} l ON l.tier = $finer AND l.bucket = g.lastb${k ? ` AND l.${k} = g.k` : ""} WHERE true`;
  return { cte, select };
}

/** The upsert of one raw sample: a second sample in the same bucket (a tick early or late) is merged into the row. */
function rawUpsertSql(t: TableSpec): string {
  const keyCols = ["tier", "bucket", ...(t.key ? [t.key] : [])];
  const cols = [...keyCols, "samples", ...t.cols.map((c) => c.col)];
  const merge = t.cols.map((c) => {
    const x = `excluded.${c.col}`;
    const avg = `CASE WHEN ${x} IS NULL THEN ${c.col} WHEN ${c.col} IS NULL THEN ${x} ELSE (${c.col} * samples + ${x}) * 1.0 / (samples + 1) END`;
    const e =
      c.agg === "last"
        ? x
        : c.agg === "max"
          ? `CASE WHEN ${c.col} IS NULL THEN ${x} WHEN ${x} IS NULL THEN ${c.col} ELSE max(${c.col}, ${x}) END`
          : c.agg === "avgInt"
            ? `CAST(ROUND(${avg}) AS INTEGER)`
            : avg;
    return `${c.col} = ${e}`;
  });
  return (
    `INSERT INTO ${t.table} (${cols.join(", ")}) VALUES (${cols.map((c) => `$${c}`).join(", ")}) ` +
    `ON CONFLICT (${keyCols.join(", ")}) DO UPDATE SET samples = samples + excluded.samples, ${merge.join(", ")}`
  );
}

/** A sample's values as the row's named parameters. */
function rowParams(t: TableSpec, sample: object): Record<string, string | number | null> {
  const out: Record<string, string | number | null> = {};
  for (const c of t.cols) {
    const v = (sample as Record<string, unknown>)[c.field];
    out[c.col] = typeof v === "number" ? (INT_COL.test(c.col) ? Math.round(v) : v) : typeof v === "string" ? v : null;
  }
  return out;
}

/** A row back into a sample's fields (averages only; a raw row's maxima equal them). */
function fromRow(t: TableSpec, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of t.cols) if (c.agg !== "max") out[c.field] = row[c.col] ?? null;
  return out;
}

/** How often a running container's name row is rewritten (keeps last_seen current for pruning). */
const NAME_REFRESH_MS = 3_600_000;

export interface MetricsStoreDeps {
  db: Db;
  /** The configured tiers, finest first; raw rows go into the first. */
  tiers: Tier[];
}

/** Build the raw side: write ticks, read raw samples back. */
export function createMetricsStore({ db, tiers }: MetricsStoreDeps) {
  const raw = tiers[0];
  const putContainer = db.sqlite.prepare(rawUpsertSql(CONTAINERS));
  const putHost = db.sqlite.prepare(rawUpsertSql(HOSTS));
  const containersSince = db.sqlite.prepare(
    "SELECT * FROM container_metrics WHERE tier = ? AND bucket >= ? ORDER BY bucket, container_id",
  );
  const appContainersSince = db.sqlite.prepare(
    "SELECT * FROM container_metrics WHERE app_slug = ? AND tier = ? AND bucket >= ? ORDER BY bucket, container_id",
  );
  const hostsSince = db.sqlite.prepare("SELECT * FROM host_metrics WHERE tier = ? AND bucket >= ? ORDER BY bucket");
  const putName = db.sqlite.prepare(
    "INSERT INTO metric_containers (container_id, app_slug, service, name, last_seen) VALUES (?, ?, ?, ?, ?) ON CONFLICT (container_id) DO UPDATE SET app_slug = excluded.app_slug, service = excluded.service, name = excluded.name, last_seen = excluded.last_seen",
  );
  const getName = db.sqlite.prepare("SELECT name FROM metric_containers WHERE container_id = ?");
  const pruneNames = db.sqlite.prepare("DELETE FROM metric_containers WHERE last_seen < ?");
  // names this process has written, for the containers of the last tick only (so it stays bounded)
  let named = new Map<string, { name: string; at: number }>();

  return {
    raw,

    /**
     * Write a tick into the finest tier, in one transaction: a row per running container (a stopped one has no
     * usage; its absence is the gap) and the host row. The bucket is the tick time aligned down.
     */
    write(tick: Tick): void {
      const bucket = tick.t - (tick.t % raw.resolutionMs);
      const next = new Map<string, { name: string; at: number }>();
      db.tx(() => {
        for (const c of tick.containers) {
          if (!c.running) continue;
          let n = named.get(c.containerId);
          if (!n || n.name !== c.name || bucket - n.at >= NAME_REFRESH_MS) {
            putName.run(c.containerId, c.app, c.service, c.name, bucket);
            n = { name: c.name, at: bucket };
          }
          next.set(c.containerId, n);
          putContainer.run({
            tier: raw.name,
            bucket,
            container_id: c.containerId,
            samples: 1,
            ...rowParams(CONTAINERS, c),
          } as any);
        }
        putHost.run({ tier: raw.name, bucket, samples: 1, ...rowParams(HOSTS, tick.host) } as any);
      });
      named = next;
    },

    /** A container's name as last written, or its short id when none was kept. */
    nameOf(id: string): string {
      return (getName.get(id) as { name: string } | null)?.name ?? id.slice(0, 12);
    },

    /** Forget the names of containers not written since `cutoff` (ms): their metrics are past retention too. */
    pruneNames(cutoff: number): number {
      return pruneNames.run(cutoff).changes;
    },

    /** Raw container samples since `sinceMs` (bucket start at or after it), oldest first. */
    containerSamples(sinceMs: number, app?: string): ContainerSample[] {
      const names = new Map<string, string>();
      const nameOf = (id: string) => {
        let n = names.get(id);
        if (n === undefined) names.set(id, (n = this.nameOf(id)));
        return n;
      };
      const rows = (
        app === undefined ? containersSince.all(raw.name, sinceMs) : appContainersSince.all(app, raw.name, sinceMs)
      ) as Array<Record<string, unknown>>;
      return rows.map((r) => {
        const id = r.container_id as string;
        return {
          t: r.bucket as number,
          containerId: id,
          name: nameOf(id),
          running: true,
          ...fromRow(CONTAINERS, r),
        } as ContainerSample;
      });
    },

    /** Raw host samples since `sinceMs`, oldest first. */
    hostSamples(sinceMs: number): HostSample[] {
      return (hostsSince.all(raw.name, sinceMs) as Array<Record<string, unknown>>).map(
        (r) => ({ t: r.bucket as number, ...fromRow(HOSTS, r) }) as HostSample,
      );
    },
  };
}

export type MetricsStore = ReturnType<typeof createMetricsStore>;
