/**
 * The worker's status: kept in memory for GET /api/git/status and saved in the settings table so a restart shows
 * the last sync, the last commit and the remote the history belongs to.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../db";
import { settings } from "../../db/schema";
import { type Clock, iso } from "../../lib/time";
import type { GitSyncConflict, GitSyncSkipped, GitSyncState, GitSyncStatus } from "../../shared/git-sync";

const KEY = "git_sync_status";
/** The conflicts a status lists (the newest; alert history keeps them all). */
const MAX_CONFLICTS = 20;
/** What a status lists of the last cycle's skipped entries (the process log has every one). */
export const MAX_SKIPPED = 50;

/** What is saved: the wire status plus the remote (URL and branch) whose history the local branch shares. */
interface Saved {
  last_sync_at: string | null;
  last_attempt_at: string | null;
  last_commit_sha: string | null;
  last_error: string | null;
  state: GitSyncState;
  behind_by: number;
  conflicts: GitSyncConflict[];
  skipped: GitSyncSkipped[];
  bound_to: string | null;
}

/** Status kept for the worker. */
export function createStatus(db: Db, clock: Clock) {
  const load = (): Saved => {
    const row = db.orm.select().from(settings).where(eq(settings.key, KEY)).get();
    const base: Saved = {
      last_sync_at: null,
      last_attempt_at: null,
      last_commit_sha: null,
      last_error: null,
      state: "disabled",
      behind_by: 0,
      conflicts: [],
      skipped: [],
      bound_to: null,
    };
    return row ? { ...base, ...(JSON.parse(row.value) as Partial<Saved>) } : base;
  };
  let s = load();
  let running = false;

  const save = () => {
    const value = JSON.stringify(s);
    const now = iso(clock.now());
    db.orm
      .insert(settings)
      .values({ key: KEY, value, updatedAt: now })
      .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: now } })
      .run();
  };

  return {
    /** The wire status (`enabled` comes from the configuration in force). */
    view(enabled: boolean): GitSyncStatus {
      return {
        enabled,
        state: enabled ? s.state : "disabled",
        behind_by: enabled ? s.behind_by : 0,
        last_sync_at: s.last_sync_at,
        last_attempt_at: s.last_attempt_at,
        last_commit_sha: s.last_commit_sha,
        last_error: enabled ? s.last_error : null,
        running: enabled && running,
        conflicts: enabled ? s.conflicts : [],
        skipped: enabled ? s.skipped : [],
      };
    },
    get state() {
      return s.state;
    },
    get behindBy() {
      return s.behind_by;
    },
    get boundTo() {
      return s.bound_to;
    },
    setRunning(on: boolean) {
      running = on;
    },
    /** A cycle finished; `fields` are what it learnt. Clears the error. */
    synced(fields: { sha: string | null; behindBy: number; conflicts?: GitSyncConflict[]; boundTo?: string }) {
      const conflicts = fields.conflicts?.length ? [...fields.conflicts, ...s.conflicts].slice(0, MAX_CONFLICTS) : s.conflicts;
      s = {
        ...s,
        last_sync_at: iso(clock.now()),
        last_attempt_at: iso(clock.now()),
        last_commit_sha: fields.sha ?? s.last_commit_sha,
        last_error: null,
        behind_by: fields.behindBy,
        conflicts,
        bound_to: fields.boundTo ?? s.bound_to,
        state: fields.conflicts?.length
          ? "conflict"
          : fields.behindBy > 0
            ? "behind"
            : s.state === "conflict"
              ? "conflict"
              : "in_sync",
      };
      save();
    },
    /** Remote changes were applied without a conflict: a conflict shown before is history now. */
    clearConflicts() {
      s = { ...s, conflicts: [], state: s.state === "conflict" ? "in_sync" : s.state };
      save();
    },
    /** A cycle failed (`message` is worded for a user). */
    failed(message: string) {
      s = { ...s, state: "error", last_error: message, last_attempt_at: iso(clock.now()) };
      save();
    },
    /** A problem that did not stop the cycle (a refused file): shown, and kept until the next clean cycle. */
    warn(message: string) {
      s = { ...s, last_error: message };
      save();
    },
    /** What the cycle that just ran left out of what the remote sent (replaces the last cycle's). */
    skipped(list: GitSyncSkipped[]) {
      s = { ...s, skipped: list.slice(0, MAX_SKIPPED) };
      save();
    },
    /** Git sync was turned off, or pointed elsewhere. */
    reset(disabled: boolean) {
      s = { ...s, state: disabled ? "disabled" : "in_sync", behind_by: 0, last_error: null, conflicts: [], skipped: [] };
      save();
    },
  };
}

export type SyncStatus = ReturnType<typeof createStatus>;
