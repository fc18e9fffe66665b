/** Durations in Go format (`1h30m`, `250ms`) and day format (`7d`), as the config and CLI accept them. */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/y;

/** Parse a duration to milliseconds; returns null when the text is not a duration. */
export function parseDuration(text: string): number | null {
  const s = text.trim();
  if (s === "0") return 0;
  if (!s) return null;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < s.length) {
    const start = PART.lastIndex;
    const m = PART.exec(s);
    if (!m || m.index !== start) return null;
    total += Number(m[1]) * UNIT_MS[m[2]];
  }
  return Number.isFinite(total) ? total : null;
}

/** Short human form of a duration in ms (`90s`, `30m`, `7d`), for messages and defaults. */
export function formatDuration(ms: number): string {
  if (ms % 86_400_000 === 0 && ms > 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
