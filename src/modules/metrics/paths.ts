/**
 * Path normalisation for request stats: id-like segments become `:id` (`/users/123` -> `/users/:id`) so top paths
 * group by route, not by record. A path with nothing to replace is returned as is (no allocation).
 */

/** Longest normalised path kept; longer ones are cut (stats keys stay small). */
export const MAX_STAT_PATH = 160;

const UUID_DASHES = [8, 13, 18, 23];

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** Whether `s[from, to)` is an id: digits, a UUID, 16+ hex characters, or a 24+ character token with digits and letters. */
export function isIdSegment(s: string, from: number, to: number): boolean {
  const n = to - from;
  if (n === 0) return false;
  let digits = 0;
  let hex = 0;
  let token = 0;
  let letters = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) digits++;
    if (isHex(c)) hex++;
    const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
    if (letter) letters++;
    if (letter || isDigit(c) || c === 45 || c === 95) token++;
  }
  if (digits === n) return true;
  if (hex === n && n >= 16) return true;
  if (n === 36 && hex === 32) {
    // UUID: dashes at 8, 13, 18, 23
    return UUID_DASHES.every((k) => s.charCodeAt(from + k) === 45);
  }
  return n >= 24 && token === n && digits > 0 && letters > 0;
}

/** The stats form of a request path (no query): id segments as `:id`, at most MAX_STAT_PATH characters. */
export function normalizePath(path: string): string {
  let out: string | null = null;
  let last = 0;
  let start = 0;
  while (start <= path.length) {
    let end = path.indexOf("/", start);
    if (end < 0) end = path.length;
    if (isIdSegment(path, start, end)) {
      out = (out ?? "") + path.slice(last, start) + ":id";
      last = end;
    }
    start = end + 1;
  }
  const result = out === null ? path : out + path.slice(last);
  return result.length > MAX_STAT_PATH ? result.slice(0, MAX_STAT_PATH) : result;
}
