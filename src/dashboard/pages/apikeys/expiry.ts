/** Expiry choices of a new API key, turned into the RFC 3339 time the API wants. */

export const EXPIRY_OPTIONS = [
  { value: "never", label: "Never" },
  { value: "7", label: "In 7 days" },
  { value: "30", label: "In 30 days" },
  { value: "90", label: "In 90 days" },
  { value: "365", label: "In 1 year" },
  { value: "date", label: "On a date…" },
] as const;

/** The expires_at of a choice; `date` is a yyyy-mm-dd from a date input (the key lasts through that local day). */
export function expiresAt(choice: string, date: string, now = Date.now()): string | null {
  if (choice === "never") return null;
  if (choice === "date") {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
    if (!m) throw new Error("Pick the expiry date");
    return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 23, 59, 59).toISOString();
  }
  return new Date(now + Number(choice) * 86_400_000).toISOString();
}
