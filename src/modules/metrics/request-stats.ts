/**
 * Request statistics storage: the proxy's 10-second batches are merged into every metrics tier (raw, 1m, 5m, 1h by
 * default) off the request path, kept per the tier's retention, and read back for a range from the tier that gives
 * a sensible number of points (tierFor: the last hour from raw, a day from 1m, a week from 5m, beyond from 1h).
 */
import type { Db } from "../../db";
import { parseDuration } from "../../lib/duration";
import type { Clock } from "../../lib/time";
import type { Log } from "../../log/logger";
import { mergeBatches, type StatsBatch, summarize } from "./aggregator";
import { PRUNE_CHUNK } from "./rollup";

export interface Tier {
  name: string;
  resolutionMs: number;
  retentionMs: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The range each tier answers up to, by position (finest first): SPEC's table for the default tiers, raw for the
 * last hour, 1m up to 24h, 5m up to a week; further tiers of a longer custom list take 30d and a year. The coarsest
 * tier answers everything beyond.
 */
const RANGE_LADDER_MS = [HOUR, DAY, 7 * DAY, 30 * DAY, 365 * DAY];

/** Most points a tier may answer a range with; a custom tier past it hands the range to the next coarser one. */
export const MAX_POINTS = 4000;

/** The configured tiers, finest first. */
export function parseTiers(tiers: ReadonlyArray<{ name: string; resolution: string; retention: string }>): Tier[] {
  return tiers
    .map((t) => ({ name: t.name, resolutionMs: parseDuration(t.resolution)!, retentionMs: parseDuration(t.retention)! }))
    .sort((a, b) => a.resolutionMs - b.resolutionMs);
}

/**
 * The tier for a range (metrics and request stats alike): the finest tier whose place in RANGE_LADDER_MS covers the
 * range, skipping a tier that does not keep the range (retention) or would answer it with more than MAX_POINTS
 * points; the coarsest tier when none does. With the default tiers this is exactly SPEC's table
 * (<= 1h raw, <= 24h 1m, <= 7d 5m, beyond 1h).
 */
export function tierFor(tiers: Tier[], rangeMs: number): Tier {
  const last = tiers.length - 1;
  for (let i = 0; i < last && i < RANGE_LADDER_MS.length; i++) {
    const t = tiers[i];
    if (rangeMs <= RANGE_LADDER_MS[i] && rangeMs <= t.retentionMs && rangeMs / t.resolutionMs <= MAX_POINTS) return t;
  }
  return tiers[last];
}

export interface RequestStatsStoreDeps {
  db: Db;
  clock: Clock;
  log: Log;
  tiers: Tier[];
}

/** Build the store. */
export function createRequestStatsStore({ db, clock, log, tiers }: RequestStatsStoreDeps) {
  const read = db.sqlite.prepare("SELECT data FROM request_stats WHERE app_slug = ? AND tier = ? AND bucket = ?");
  const write = db.sqlite.prepare(
    "INSERT INTO request_stats (app_slug, tier, bucket, data) VALUES (?, ?, ?, ?) ON CONFLICT (app_slug, tier, bucket) DO UPDATE SET data = excluded.data",
  );
  const range = db.sqlite.prepare(
    "SELECT data FROM request_stats WHERE app_slug = ? AND tier = ? AND bucket >= ? AND bucket < ? ORDER BY bucket",
  );
  const pruneSome = db.sqlite.prepare(
    "DELETE FROM request_stats WHERE rowid IN (SELECT rowid FROM request_stats WHERE tier = ? AND bucket < ? LIMIT ?)",
  );
  let pruning: Promise<number> | null = null;

  return {
    tiers,

    /** Merge batches into every tier, in one transaction. */
    store(batches: StatsBatch[]): void {
      if (batches.length === 0) return;
      db.tx(() => {
        for (const b of batches) {
          for (const t of tiers) {
            const bucket = Math.floor(b.start / t.resolutionMs) * t.resolutionMs;
            const row = read.get(b.app, t.name, bucket) as { data: string } | null;
            const merged = mergeBatches(row ? [JSON.parse(row.data) as StatsBatch, b] : [b])!;
            merged.start = bucket;
            merged.durationMs = t.resolutionMs;
            write.run(b.app, t.name, bucket, JSON.stringify(merged));
          }
        }
      });
    },

    /**
     * Drop buckets older than each tier's retention, at most `chunk` rows per statement (each its own transaction),
     * yielding to the event loop between statements: after a long outage a day of busy apps' buckets is past
     * retention at once, and one DELETE of them held the proxy up for seconds. A call while one runs joins it.
     */
    prune(chunk = PRUNE_CHUNK): Promise<number> {
      pruning ??= (async () => {
        let n = 0;
        const now = clock.now();
        try {
          for (const t of tiers) {
            for (;;) {
              const d = pruneSome.run(t.name, now - t.retentionMs, chunk).changes;
              n += d;
              await new Promise<void>((r) => setImmediate(r));
              if (d < chunk) break;
            }
          }
        } catch (e) {
          log.warn("pruning request stats failed", { error: (e as Error).message });
        }
        if (n) log.debug("pruned request stats", { buckets: n });
        return n;
      })().finally(() => {
        pruning = null;
      });
      return pruning;
    },

    /** The request-stats answer for an app over the last `rangeMs`. */
    query(app: string, rangeMs: number) {
      const tier = tierFor(tiers, rangeMs);
      const to = clock.now();
      const from = Math.floor((to - rangeMs) / tier.resolutionMs) * tier.resolutionMs;
      const batches = (range.all(app, tier.name, from, to + tier.resolutionMs) as Array<{ data: string }>).map(
        (r) => JSON.parse(r.data) as StatsBatch,
      );
      const s = summarize(batches, rangeMs);
      return {
        tier: tier.name,
        /** Width of each `series` bucket; buckets without requests are left out. */
        step_ms: tier.resolutionMs,
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        requests: s.requests,
        rps: Math.round(s.rps * 1000) / 1000,
        p50_ms: round(s.p50),
        p95_ms: round(s.p95),
        p99_ms: round(s.p99),
        bytes: s.bytes,
        status_codes: s.statuses,
        status_classes: s.classes,
        top_paths: s.topPaths,
        series: batches.map((b) => {
          const one = summarize([b], b.durationMs, 0);
          return {
            t: new Date(b.start).toISOString(),
            requests: b.count,
            rps: Math.round(one.rps * 1000) / 1000,
            p50_ms: round(one.p50),
            p95_ms: round(one.p95),
            p99_ms: round(one.p99),
            errors: b.classes["5xx"] ?? 0,
          };
        }),
      };
    },
  };
}

const round = (ms: number) => Math.round(ms * 100) / 100;

export type RequestStatsStore = ReturnType<typeof createRequestStatsStore>;
