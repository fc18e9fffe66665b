/** Small response helpers so routes read the same everywhere. */

/** Set status and return the value (201 created, 202 accepted). */
export function withStatus<T>(set: { status?: number | string }, status: number, value: T): T {
  set.status = status;
  return value;
}

/** 204 with no body; headers already set on `set` still apply. */
export function noContent(set: { status?: number | string }): undefined {
  set.status = 204;
  return undefined;
}

/** Parse a positive integer path id; null when it is not one. */
export function parseId(text: string): number | null {
  if (!/^[1-9]\d{0,15}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}
