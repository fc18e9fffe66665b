/**
 * Rollups and pruning of container and host metrics. Each coarser tier's bucket is written once, when it has closed,
 * from the next finer tier's rows (`INSERT ... ON CONFLICT DO NOTHING` on the primary key). Where a tier is up to is
 * read from the table (its newest bucket), so a pass after a restart writes every closed bucket not yet written and
 * nothing twice, and a bucket a restart cut in two is rolled up from the rows of both processes. Work is sliced and
 * yields to the event loop between slices, so catching up on a long outage or pruning a big table never blocks.
 */
import type { Db } from "../../db";
import type { Log } from "../../log/logger";
import type { Tier } from "./request-stats";
import { aggregateSql, CONTAINERS, HOSTS, type TableSpec } from "./store";

/** Most rows one prune DELETE removes; the loop yields between them. */
export const PRUNE_CHUNK = 5000;

/** Finer buckets one rollup slice reads per container (360 = an hour of raw rows). */
const SLICE_FINER_BUCKETS = 360;

/** Let timers, I/O and requests run between two slices of work. */
const yieldNow = () => new Promise<void>((r) => setImmediate(r));

export interface RollupDeps {
  db: Db;
  /** The configured tiers, finest first; each resolution should divide the next coarser one (the defaults do). */
  tiers: Tier[];
  log: Log;
}

interface TablePlan {
  spec: TableSpec;
  newest: ReturnType<Db["sqlite"]["prepare"]>;
  firstFrom: ReturnType<Db["sqlite"]["prepare"]>;
  insert: ReturnType<Db["sqlite"]["prepare"]>;
  prune: ReturnType<Db["sqlite"]["prepare"]>;
}

function plan(db: Db, spec: TableSpec): TablePlan {
  const { cte, select } = aggregateSql(spec);
  const cols = ["tier", "bucket", ...(spec.key ? [spec.key] : []), "samples", ...spec.cols.map((c) => c.col)];
  return {
    spec,
    newest: db.sqlite.prepare(`SELECT MAX(bucket) AS m FROM ${spec.table} WHERE tier = ?`),
    firstFrom: db.sqlite.prepare(`SELECT MIN(bucket) AS m FROM ${spec.table} WHERE tier = ? AND bucket >= ?`),
    insert: db.sqlite.prepare(
      `${cte} INSERT INTO ${spec.table} (${cols.join(", ")}) ${select.replace(/^SELECT /, "SELECT $tier, ")} ON CONFLICT DO NOTHING`,
    ),
    prune: db.sqlite.prepare(
      `DELETE FROM ${spec.table} WHERE rowid IN (SELECT rowid FROM ${spec.table} WHERE tier = $tier AND bucket < $cutoff LIMIT $limit)`,
    ),
  };
}

/** Build the rollup and prune passes. */
export function createRollup({ db, tiers, log }: RollupDeps) {
  const tables = [plan(db, CONTAINERS), plan(db, HOSTS)];

  /** Roll up one table's closed buckets of tier `k` (from tier k-1) not written yet; returns rows written. */
  async function rollTier(p: TablePlan, k: number, now: number): Promise<number> {
    const tier = tiers[k];
    const finer = tiers[k - 1];
    const res = tier.resolutionMs;
    // buckets starting before `to` have closed
    const to = now - (now % res);
    const newest = (p.newest.get(tier.name) as { m: number | null }).m;
    let from = newest === null ? 0 : newest + res;
    const span = Math.max(res, Math.floor((SLICE_FINER_BUCKETS * finer.resolutionMs) / res) * res);
    let written = 0;
    for (;;) {
      // jump over stretches without finer rows (the server was off) instead of walking them slice by slice
      const next = (p.firstFrom.get(finer.name, from) as { m: number | null }).m;
      if (next === null) break;
      const start = next - (next % res);
      if (start >= to) break;
      const end = Math.min(start + span, to);
      written += p.insert.run({ tier: tier.name, finer: finer.name, res, from: start, to: end } as any).changes;
      from = end;
      await yieldNow();
    }
    return written;
  }

  return {
    /**
     * Write every closed bucket of every coarser tier not written yet, finest first (a 5m bucket needs its 1m rows),
     * as of `now`. Returns the rows written.
     */
    async rollUp(now: number): Promise<number> {
      let n = 0;
      for (let k = 1; k < tiers.length; k++) for (const p of tables) n += await rollTier(p, k, now);
      if (n) log.debug("rolled up metrics", { rows: n });
      return n;
    },

    /**
     * Delete rows whose bucket starts before now minus their tier's retention, at most `chunk` rows per statement
     * (each its own transaction), yielding between statements. Returns the rows deleted and statements run.
     */
    async prune(now: number, chunk = PRUNE_CHUNK): Promise<{ rows: number; statements: number }> {
      let rows = 0;
      let statements = 0;
      for (const p of tables) {
        for (const t of tiers) {
          for (;;) {
            const n = p.prune.run({ tier: t.name, cutoff: now - t.retentionMs, limit: chunk } as any).changes;
            statements++;
            rows += n;
            await yieldNow();
            if (n < chunk) break;
          }
        }
      }
      if (rows) log.debug("pruned metrics", { rows, statements });
      return { rows, statements };
    },
  };
}

export type Rollup = ReturnType<typeof createRollup>;
