/**
 * The git sync badges of activity entries: which entries wait for the next push, and marking exactly those synced
 * (with the commit) or failed (with the error). Reads walk the primary key from a low-water mark, so a large log is
 * scanned once per process, not once per cycle.
 */
import type { Database } from "bun:sqlite";

/** A pending entry as the commit message lists it. */
export interface PendingEntry {
  id: number;
  category: string;
  action: string;
  target: string | null;
  app_slug: string | null;
  summary: string;
}

/** How many entries one cycle takes (the rest wait for the next). */
const BATCH = 500;

/** Pending entries and their marks. */
export function createSyncMarks(sqlite: Database) {
  // every entry at or below this id is known to be settled (not pending)
  let settledUpTo = 0;
  // the lowest id that may be marked failed (undefined: not looked up yet in this process; null: none)
  let failedFrom: number | null | undefined;
  const lowestFailed = (): number | null => {
    if (failedFrom === undefined) {
      failedFrom =
        sqlite.query<{ m: number | null }, []>("SELECT min(id) AS m FROM activity WHERE sync_status = 'failed'").get()?.m ?? null;
    }
    return failedFrom;
  };
  return {
    /** The oldest pending entries (at most 500), oldest first. */
    pending(): PendingEntry[] {
      const rows = sqlite
        .query<PendingEntry, [number, number]>(
          "SELECT id, category, action, target, app_slug, summary FROM activity WHERE id > ? AND sync_status = 'pending' ORDER BY id LIMIT ?",
        )
        .all(settledUpTo, BATCH);
      if (rows.length === 0) {
        settledUpTo = sqlite.query<{ m: number | null }, []>("SELECT max(id) AS m FROM activity").get()?.m ?? 0;
      } else settledUpTo = Math.max(settledUpTo, rows[0].id - 1);
      return rows;
    },
    /**
     * Committed and pushed in `sha`. Entries an earlier cycle marked failed are carried by this push too (every
     * cycle commits the whole exported state and a push sends every local commit): they turn synced with it.
     */
    markSynced(ids: readonly number[], sha: string): void {
      if (ids.length > 0) {
        sqlite.run(
          `UPDATE activity SET sync_status = 'synced', sync_commit_sha = ?, sync_error = NULL WHERE id IN (${ids.map(() => "?").join(",")}) AND sync_status = 'pending'`,
          [sha, ...ids],
        );
      }
      const from = lowestFailed();
      if (from !== null) {
        sqlite.run(
          "UPDATE activity SET sync_status = 'synced', sync_commit_sha = ?, sync_error = NULL WHERE id >= ? AND sync_status = 'failed'",
          [sha, from],
        );
        failedFrom = null;
      }
    },
    /** The commit or the push failed (`error` is worded for a user). */
    markFailed(ids: readonly number[], error: string): void {
      if (ids.length === 0) return;
      sqlite.run(
        `UPDATE activity SET sync_status = 'failed', sync_error = ? WHERE id IN (${ids.map(() => "?").join(",")}) AND sync_status = 'pending'`,
        [error.slice(0, 500), ...ids],
      );
      const low = Math.min(...ids);
      const known = lowestFailed();
      failedFrom = known === null ? low : Math.min(known, low);
    },
  };
}

export type SyncMarks = ReturnType<typeof createSyncMarks>;
