/**
 * Range queries of container and host metrics: the tier from the range (tierFor), every bucket of the range present
 * (a bucket without a row is a point whose values are all null: an explicit gap, never a zero), and the newest
 * buckets a coarser tier has not rolled up yet (the one still open) computed from the finest tier on the fly, so a
 * day's chart ends at the last tick like an hour's does. An app answer past MAX_ANSWER_POINTS cuts each container's
 * series to its own rows (first to last), so a year of replaced containers is not a year of gaps for each.
 */
import type { Db } from "../../db";
import type { Clock } from "../../lib/time";
import type { AppMetrics, ContainerPoint, SystemMetrics, SystemPoint } from "../../shared/metrics";
import { type Tier, tierFor } from "./request-stats";
import { aggregateSql, CONTAINERS, HOSTS, type TableSpec } from "./store";

type Row = Record<string, unknown>;

/**
 * Points an app's answer holds at most with every bucket for every container; past it each container's series runs
 * from its first row to its last only (gaps inside kept), so replaced containers cannot multiply the range.
 */
export const MAX_ANSWER_POINTS = 200_000;

const CONTAINER_POINT = [
  "cpu_pct",
  "cpu_limit_pct",
  "mem_bytes",
  "mem_limit_bytes",
  "net_rx_bps",
  "net_tx_bps",
  "blk_read_bps",
  "blk_write_bps",
  "cpu_pct_max",
  "mem_bytes_max",
  "restarts",
] as const satisfies ReadonlyArray<keyof ContainerPoint>;

const SYSTEM_POINT = [
  "cpu_pct",
  "cpu_pct_max",
  "load1",
  "load5",
  "load15",
  "mem_used_bytes",
  "mem_total_bytes",
  "swap_used_bytes",
  "swap_total_bytes",
  "disk_free_bytes",
  "disk_total_bytes",
  "docker_disk_free_bytes",
  "docker_disk_total_bytes",
  "net_rx_bps",
  "net_tx_bps",
] as const satisfies ReadonlyArray<keyof SystemPoint>;

/** A point of `keys` from a row (floats to 2 decimals), or the gap point when there is no row. */
function point(t: number, keys: readonly string[], row: Row | undefined): Record<string, unknown> {
  const p: Record<string, unknown> = { t: new Date(t).toISOString() };
  for (const k of keys) {
    const v = row?.[k];
    p[k] = typeof v === "number" ? Math.round(v * 100) / 100 : null;
  }
  return p;
}

/** The buckets a range is answered with: `count` of `step` ms ending with the one holding `now`. */
export function windowOf(tiers: Tier[], rangeMs: number, now: number) {
  const tier = tierFor(tiers, rangeMs);
  const step = tier.resolutionMs;
  const last = now - (now % step);
  const count = Math.max(1, Math.ceil(rangeMs / step));
  return { tier, step, first: last - (count - 1) * step, last, count };
}

export interface MetricsQueryDeps {
  db: Db;
  clock: Clock;
  tiers: Tier[];
  /** A container's name (the last tick's), for ids no longer running: a short id. */
  nameOf: (id: string) => string;
}

/** Build the queries. */
export function createMetricsQuery({ db, clock, tiers, nameOf }: MetricsQueryDeps) {
  const finest = tiers[0];
  const stmts = (spec: TableSpec) => {
    const { cte, select } = aggregateSql(spec, { app: spec.key !== null });
    const app = spec.key ? "app_slug = $app AND " : "";
    return {
      rows: db.sqlite.prepare(
        `SELECT * FROM ${spec.table} WHERE ${app}tier = $tier AND bucket >= $from AND bucket <= $to ORDER BY bucket`,
      ),
      newest: db.sqlite.prepare(`SELECT MAX(bucket) AS m FROM ${spec.table} WHERE tier = ?`),
      open: db.sqlite.prepare(`${cte} ${select}`),
    };
  };
  const containers = stmts(CONTAINERS);
  const hosts = stmts(HOSTS);

  /** Rows of the window: the tier's own, then the buckets it has not rolled up yet, from the finest tier. */
  function rowsOf(s: ReturnType<typeof stmts>, w: ReturnType<typeof windowOf>, app?: string): Row[] {
    const p = app === undefined ? {} : { app };
    const rows = s.rows.all({ ...p, tier: w.tier.name, from: w.first, to: w.last } as any) as Row[];
    if (w.tier === finest) return rows;
    const newest = (s.newest.get(w.tier.name) as { m: number | null }).m;
    const from = newest === null ? w.first : Math.max(w.first, newest + w.step);
    if (from > w.last) return rows;
    const open = s.open.all({ ...p, finer: finest.name, res: w.step, from, to: w.last + w.step } as any) as Row[];
    return rows.filter((r) => (r.bucket as number) < from).concat(open);
  }

  return {
    /** Container metrics of one app over the last `rangeMs`: one series per container that has rows in it. */
    app(slug: string, rangeMs: number): Omit<AppMetrics, "range"> {
      const w = windowOf(tiers, rangeMs, clock.now());
      const byId = new Map<string, { service: string; rows: Map<number, Row>; first: number; last: number }>();
      for (const r of rowsOf(containers, w, slug)) {
        const id = (r.container_id ?? r.k) as string;
        const bucket = r.bucket as number;
        let c = byId.get(id);
        if (!c) byId.set(id, (c = { service: r.service as string, rows: new Map(), first: bucket, last: bucket }));
        c.service = r.service as string;
        c.rows.set(bucket, r);
        c.first = Math.min(c.first, bucket);
        c.last = Math.max(c.last, bucket);
      }
      const whole = byId.size * w.count <= MAX_ANSWER_POINTS;
      const list = [...byId].map(([id, c]) => {
        const points: ContainerPoint[] = [];
        const [from, to] = whole ? [w.first, w.last] : [c.first, c.last];
        for (let t = from; t <= to; t += w.step) points.push(point(t, CONTAINER_POINT, c.rows.get(t)) as any);
        return { id, name: nameOf(id), service: c.service, points };
      });
      list.sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : a.name < b.name ? -1 : 1));
      return {
        tier: w.tier.name,
        step_seconds: w.step / 1000,
        from: new Date(w.first).toISOString(),
        to: new Date(w.last + w.step).toISOString(),
        containers: list,
      };
    },

    /** Host metrics over the last `rangeMs`. */
    system(rangeMs: number): Omit<SystemMetrics, "range"> {
      const w = windowOf(tiers, rangeMs, clock.now());
      const rows = new Map(rowsOf(hosts, w).map((r) => [r.bucket as number, r]));
      const points: SystemPoint[] = [];
      for (let t = w.first; t <= w.last; t += w.step) points.push(point(t, SYSTEM_POINT, rows.get(t)) as any);
      return {
        tier: w.tier.name,
        step_seconds: w.step / 1000,
        from: new Date(w.first).toISOString(),
        to: new Date(w.last + w.step).toISOString(),
        points,
      };
    },
  };
}

export type MetricsQuery = ReturnType<typeof createMetricsQuery>;
