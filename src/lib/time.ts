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
