/**
 * The activity recorder and reader. Services call `record` inside the transaction of their change, so an entry
 * exists exactly when its change does. Reads apply the visibility rules of SPEC.md.
 */
import type { Db } from "../../db";
import { redact } from "../../lib/redact";
import { type Clock, iso } from "../../lib/time";
import type { Log } from "../../log/logger";
import type { ActivityDetail, ActivityPage } from "../../shared/schemas/activity";
import { type Actor, type Category, isSyncable, type NewEntry } from "./model";
import { type ActivityDetailRow, createActivityRepo, type ListFilter, type Visibility } from "./repo";
import { createSyncMarks } from "./sync";

export type { ListFilter, Visibility };

export interface ActivityDeps {
  db: Db;
  clock: Clock;
  log: Log;
  /** Whether git sync is on (entries of syncable categories then start as pending). */
  gitSyncEnabled?: () => boolean;
  /** Told after an entry was recorded pending (the git sync worker schedules a push). */
  onPending?: () => void;
}

export const RECENT_COUNT = 8;
// small batches keep each write lock short (~30 ms at 1M rows) so writers barely wait during the nightly run
const PRUNE_BATCH = 2_000;

/** Build the activity service. */
export function createActivity({ db, clock, log, gitSyncEnabled = () => false, onPending }: ActivityDeps) {
  const repo = createActivityRepo(db.sqlite);
  const sync = createSyncMarks(db.sqlite);

  const toDetail = (r: ActivityDetailRow): ActivityDetail => {
    const { actor_user_id: _, before_json, after_json, ...rest } = r;
    return {
      ...rest,
      before_json: before_json ? JSON.parse(before_json) : null,
      after_json: after_json ? JSON.parse(after_json) : null,
    };
  };

  const visible = (r: ActivityDetailRow, vis: Visibility) =>
    vis.all ||
    (r.app_slug !== null && vis.slugs.includes(r.app_slug)) ||
    (r.category === "auth" && r.actor_user_id === vis.userId);

  /** Record one entry. Call inside the change's transaction. Returns the entry id. */
  const record = (e: NewEntry): number => {
    const pending = gitSyncEnabled() && isSyncable(e.category, e.action);
    const id = repo.insert({
      appSlug: e.appSlug ?? null,
      appId: e.appId ?? null,
      actorUserId: e.actor.userId,
      actorName: e.actor.name,
      actorSource: e.actor.source,
      ip: e.actor.ip,
      category: e.category,
      action: e.action,
      target: e.target ?? null,
      summary: e.summary,
      error: e.error ?? null,
      composeVersionId: e.composeVersionId ?? null,
      syncStatus: pending ? "pending" : null,
      beforeJson: e.before === undefined || e.before === null ? null : JSON.stringify(redact(e.before)),
      afterJson: e.after === undefined || e.after === null ? null : JSON.stringify(redact(e.after)),
      createdAt: iso(clock.now()),
    });
    if (pending) onPending?.();
    return id;
  };

  /** One page of entries, newest first, with the cursor of the next page. */
  const list = (f: ListFilter, vis: Visibility): ActivityPage => {
    const rows = repo.list(f, vis);
    const more = rows.length > f.limit;
    const entries = more ? rows.slice(0, f.limit) : rows;
    return { entries, next_before: more ? entries[entries.length - 1].id : null };
  };

  return {
    record,
    list,

    /** The dashboard feed: the newest RECENT_COUNT visible entries, with the list's filters. */
    recent: (vis: Visibility, f: Omit<ListFilter, "limit"> = {}) => list({ ...f, limit: RECENT_COUNT }, vis),

    /** One entry with snapshots, or null when it does not exist or is not visible. */
    get(id: number, vis: Visibility): ActivityDetail | null {
      const r = repo.get(id);
      return r && visible(r, vis) ? toDetail(r) : null;
    },

    /** Delete every entry and record the single audit_purged entry, in one transaction. */
    purge(actor: Actor): { deleted: number; id: number } {
      return db.tx(() => {
        const deleted = repo.count();
        repo.deleteAll();
        const id = record({
          actor,
          category: "system",
          action: "audit_purged",
          target: "activity",
          summary: `${actor.name} purged the activity log (${deleted} ${deleted === 1 ? "entry" : "entries"})`,
          after: { deleted },
        });
        return { deleted, id };
      });
    },

    /** Remove entries older than `days` (0 keeps forever), in batches so writers are never blocked for long. */
    prune(days: number): number {
      if (days <= 0) return 0;
      const cutoff = iso(clock.now() - days * 86_400_000);
      let total = 0;
      for (;;) {
        const n = db.tx(() => repo.deleteOlderThan(cutoff, PRUNE_BATCH));
        total += n;
        if (n < PRUNE_BATCH) break;
      }
      if (total > 0) {
        // shrink the WAL the delete grew; best effort (a busy reader just leaves it to journal_size_limit)
        try {
          db.sqlite.run("PRAGMA wal_checkpoint(TRUNCATE)");
        } catch {
          // checkpoint runs again automatically
        }
        log.info("pruned activity entries", { count: total, older_than_days: days });
      }
      return total;
    },

    /** Git sync badges: pending entries, marked synced or failed by the worker. */
    sync,

    repo,
  };
}

export type Activity = ReturnType<typeof createActivity>;
export type { Category };
