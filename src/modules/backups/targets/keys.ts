/**
 * Storage keys of backup archives: relative paths of safe segments, checked before any target touches the disk or
 * the bucket, so a key can never name a file outside the backup dir or another prefix of the bucket.
 */

/** One path segment of a key: starts with a letter or digit (never a dot, so temp and probe files cannot clash). */
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;
const MAX_KEY = 1000;

/** A storage operation that failed, naming what failed; `code` is the system or S3 error code when there is one. */
export class TargetError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = "TargetError";
  }
}

/**
 * Check a key: segments of `A-Z a-z 0-9 . _ -` joined by `/`, none empty, none starting with a dot (so no `.` or
 * `..`), not absolute, at most 1000 characters. Returns the key; throws a {@link TargetError} otherwise.
 */
export function checkKey(key: string): string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY)
    throw new TargetError("invalid backup key: empty or too long");
  const bad = key.split("/").find((s) => !SEGMENT.test(s));
  if (bad !== undefined) throw new TargetError(`invalid backup key ${JSON.stringify(key)}: bad segment ${JSON.stringify(bad)}`);
  return key;
}

/** Turn any name (an app slug, a service, a timestamp) into a valid key segment: other characters become `-`. */
export function keySegment(name: string): string {
  const s = name.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[.-]+/, "");
  return (s || "x").slice(0, 200);
}
