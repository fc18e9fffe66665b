/** Time helpers: a clock interface so tests can move time, and RFC 3339 formatting. */

/** Source of the current time; the real one is `systemClock`. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** RFC 3339 UTC string with millisecond precision. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Stop something gracefully, but not forever: `stop(false)` first, and `stop(true)` (close what is still open) once
 * `graceMs` has passed. A client that never finishes its request must not keep the process from stopping.
 */
export async function stopWithin(stop: (force: boolean) => Promise<unknown>, graceMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((r) => {
    timer = setTimeout(() => r("late"), graceMs);
  });
  const graceful = stop(false);
  try {
    if ((await Promise.race([graceful, late])) === "late") {
      await stop(true);
      await graceful;
    }
  } finally {
    clearTimeout(timer);
  }
}
