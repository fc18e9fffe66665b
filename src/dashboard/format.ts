/** Formatting of times and small labels for display. */

const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const dtf = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** Absolute local time, e.g. "3 May 2026, 14:02:11". Empty for null. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dtf.format(d);
}

/** Relative time, e.g. "5 minutes ago", "in 3 days". */
export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "";
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return iso;
  const s = Math.round((t - now) / 1000);
  const abs = Math.abs(s);
  if (abs < 45) return "just now";
  if (abs < 45 * 60) return rtf.format(Math.round(s / 60), "minute");
  if (abs < 22 * 3600) return rtf.format(Math.round(s / 3600), "hour");
  if (abs < 45 * 86400) return rtf.format(Math.round(s / 86400), "day");
  if (abs < 320 * 86400) return rtf.format(Math.round(s / (30 * 86400)), "month");
  return rtf.format(Math.round(s / (365 * 86400)), "year");
}

const SOURCES: Record<string, string> = { ui: "UI", api: "API", cli: "CLI", git_sync: "git sync", system: "system" };

/** Where a change came from, as people say it ("UI", "API", "git sync"). */
export function sourceLabel(s: string): string {
  return SOURCES[s] ?? humanize(s);
}

/** "git_sync" -> "git sync", "login_failed" -> "login failed". */
export function humanize(s: string | null | undefined): string {
  return (s ?? "").replace(/_/g, " ");
}
