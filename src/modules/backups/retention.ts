/**
 * Retention after a successful run: a config keeps at most `retention_count` succeeded runs and none older than
 * `retention_days`. The stored object goes first and its row after, so a row never points at nothing it claims; a
 * delete that fails keeps the row (and is logged) so the next pass tries again. Failed runs age out by days too.
 */
import { iso } from "../../lib/time";
import { type BackupDeps, specOf } from "./deps";
import type { ConfigRow, RunRow } from "./repo";

const DAY_MS = 86_400_000;

/** The runs a config's retention removes now, oldest last. */
export function expired(c: Pick<ConfigRow, "retentionCount" | "retentionDays">, kept: RunRow[], now: number): RunRow[] {
  const cutoff = c.retentionDays ? now - c.retentionDays * DAY_MS : null;
  return kept.filter(
    (r, i) => (c.retentionCount !== null && i >= c.retentionCount) || (cutoff !== null && Date.parse(r.startedAt) < cutoff),
  );
}

/** Apply a config's retention; returns the ids of the runs removed. */
export async function applyRetention(d: BackupDeps, c: ConfigRow): Promise<number[]> {
  if (c.retentionCount === null && c.retentionDays === null) return [];
  const now = d.clock.now();
  const removed: number[] = [];
  for (const r of expired(c, d.repo.kept(c.id), now)) {
    try {
      // each run's own secret: the config may write elsewhere now
      const sealed = r.targetKind === "s3" ? (r.secretEnc ?? c.secretEnc) : null;
      if (r.location)
        await d.target(specOf(r.targetKind, r.targetJson), sealed ? d.secrets.open(sealed) : null).delete(r.location);
      d.repo.removeRun(r.id);
      removed.push(r.id);
    } catch (e) {
      d.log.warn("retention could not delete a backup; its row is kept", { run: r.id, error: (e as Error).message });
    }
  }
  if (c.retentionDays) {
    for (const r of d.repo.failedBefore(c.id, iso(now - c.retentionDays * DAY_MS))) {
      d.repo.removeRun(r.id);
      removed.push(r.id);
    }
  }
  return removed;
}
