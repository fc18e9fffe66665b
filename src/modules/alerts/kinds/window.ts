/**
 * "Above X for N minutes" over raw metric samples: the condition holds at the newest sample, every sample of the
 * last N minutes meets it, and the samples reach back the whole N minutes (a container started 2 minutes ago has not
 * been hot for 5). Gaps inside the window (collector paused) neither break nor prove the condition.
 */

/** Slack on "the samples reach back N minutes" and "the newest sample is current": 1.5 collection intervals. */
export const GRACE_MS = 15_000;

export interface Point {
  t: number;
  v: number;
}

/** Judge a series, oldest first; null when it has no current point (the subject is gone or not running). */
export function judgeWindow(
  points: Point[],
  now: number,
  durationMs: number,
  breaches: (v: number) => boolean,
): { breach: boolean; sustained: boolean; value: number } | null {
  const last = points.at(-1);
  if (!last || last.t < now - GRACE_MS) return null;
  const breach = breaches(last.v);
  if (durationMs === 0) return { breach, sustained: breach, value: last.v };
  const window = points.filter((p) => p.t >= now - durationMs);
  const sustained = breach && window[0].t <= now - durationMs + GRACE_MS && window.every((p) => breaches(p.v));
  const value = sustained ? window.reduce((a, p) => a + p.v, 0) / window.length : last.v;
  return { breach, sustained, value };
}
