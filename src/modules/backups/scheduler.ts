/**
 * Schedules: croner computes each enabled config's next due time in its time zone; one timer per config fires it and
 * re-arms. `last_scheduled_at` records the due time a run was started for, so after downtime a due time between it
 * and now that nobody ran is noticed and run once (trigger `missed`), however many were missed. Time is read from
 * the injected clock, so tests move it by hand.
 */
import { Cron } from "croner";
import { type Clock, iso } from "../../lib/time";
import type { Log } from "../../log/logger";
import type { BackupRepo, ConfigRow } from "./repo";

/** The longest a timer may wait at once (setTimeout's limit); longer waits re-arm. */
const MAX_WAIT_MS = 2 ** 31 - 1;

export interface SchedulerDeps {
  repo: BackupRepo;
  clock: Clock;
  log: Log;
  /** Start a run; false when it did not (one runs already, or the app is gone). */
  fire(c: ConfigRow, trigger: "schedule" | "missed"): boolean;
  /** A due time passed without its run: skipped (one still going) or missed (the server was down). */
  missed(c: ConfigRow, dueIso: string, why: string): void;
}

/** The cron of a config, or null without a (valid) schedule. */
export function cronOf(c: Pick<ConfigRow, "schedule" | "timezone">): Cron | null {
  if (!c.schedule) return null;
  try {
    return new Cron(c.schedule, { paused: true, ...(c.timezone ? { timezone: c.timezone } : {}) });
  } catch {
    return null;
  }
}

/** The next due time after `from` of an enabled, scheduled config, or null. */
export function nextDue(c: ConfigRow, from: number): number | null {
  if (!c.enabled) return null;
  const next = cronOf(c)?.nextRun(new Date(from));
  return next ? next.getTime() : null;
}

/** Build the scheduler (timers start with `start`). */
export function createScheduler(d: SchedulerDeps) {
  const timers = new Map<number, ReturnType<typeof setTimeout>>();
  let running = false;

  const clear = (id: number) => {
    const t = timers.get(id);
    if (t) clearTimeout(t);
    timers.delete(id);
  };

  const arm = (c: ConfigRow) => {
    clear(c.id);
    const now = d.clock.now();
    const due = nextDue(c, now);
    if (due === null) return;
    const t = setTimeout(() => onTimer(c.id, due), Math.min(MAX_WAIT_MS, Math.max(0, due - now)));
    t.unref?.();
    timers.set(c.id, t);
  };

  const onTimer = (id: number, due: number) => {
    timers.delete(id);
    if (!running) return;
    const c = d.repo.config(id);
    if (!c) return;
    // a long wait is cut into pieces; the clock decides whether the due time has come
    if (d.clock.now() >= due) {
      d.repo.updateConfig(id, { lastScheduledAt: iso(due) });
      if (!d.fire(c, "schedule")) {
        d.log.warn("scheduled backup skipped: a run is still going or the app is gone", { config: id });
        d.missed(c, iso(due), "skipped: the previous run was still going");
      }
    }
    arm(d.repo.config(id) ?? c);
  };

  return {
    /** Arm every enabled, scheduled config. */
    start(): void {
      running = true;
      for (const c of d.repo.allConfigs()) arm(c);
    },

    /** Re-read one config after a change (or its removal). */
    reload(id: number): void {
      clear(id);
      const c = d.repo.config(id);
      if (running && c) arm(c);
    },

    /**
     * Run once every config whose due time passed unrun while the server was down; returns the ids fired. The
     * reference is `last_scheduled_at` (set when the schedule was set, and at each scheduled run).
     */
    runMissed(): number[] {
      const fired: number[] = [];
      const now = d.clock.now();
      for (const c of d.repo.allConfigs()) {
        if (!c.enabled || !c.schedule || !c.lastScheduledAt) continue;
        const cron = cronOf(c);
        const next = cron?.nextRun(new Date(c.lastScheduledAt));
        if (!cron || !next || next.getTime() > now) continue;
        // the latest due time passed stands for all of them: one run, not one per missed slot
        const latest = cron.previousRuns(1, new Date(now + 1))[0] ?? next;
        d.repo.updateConfig(c.id, { lastScheduledAt: iso(latest.getTime()) });
        d.missed(c, iso(next.getTime()), "missed while the server was down; running it now");
        if (d.fire(c, "missed")) fired.push(c.id);
      }
      return fired;
    },

    /** The next due time of a config (RFC 3339), or null. */
    nextRunAt(c: ConfigRow): string | null {
      const due = nextDue(c, d.clock.now());
      return due === null ? null : iso(due);
    },

    stop(): void {
      running = false;
      for (const id of [...timers.keys()]) clear(id);
    },
  };
}

/** The scheduler's type. */
export type Scheduler = ReturnType<typeof createScheduler>;
