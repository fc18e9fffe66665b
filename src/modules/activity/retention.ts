/** The nightly maintenance job: activity retention and stale login-failure rows. Runs at start and at 03:00. */
import type { Ctx } from "../../context";

const NIGHTLY_HOUR = 3;

/** Milliseconds from `now` to the next local `hour`:00. */
export function msUntilHour(now: Date, hour: number): number {
  const next = new Date(now);
  next.setHours(hour, 0, 0, 0);
  if (next.getTime() <= now.getTime()) next.setDate(next.getDate() + 1);
  return next.getTime() - now.getTime();
}

/** Run maintenance now and every night; returns the stop function. */
export function startNightly(ctx: Ctx): () => void {
  const log = ctx.logs.logger("retention");
  const run = () => {
    try {
      ctx.activity.prune(ctx.settings.auditRetentionDays());
      ctx.guard.prune();
    } catch (e) {
      log.error("nightly maintenance failed", { error: e as Error });
    }
  };
  run();
  let timer: ReturnType<typeof setTimeout>;
  const schedule = () => {
    timer = setTimeout(
      () => {
        run();
        schedule();
      },
      msUntilHour(new Date(ctx.clock.now()), NIGHTLY_HOUR),
    );
    timer.unref?.();
  };
  schedule();
  return () => clearTimeout(timer);
}
