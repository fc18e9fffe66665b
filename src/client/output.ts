/** Printing results: JSON for scripts (`--output json`) or an aligned text table for people. */
import { ClientError } from "./errors";

/** Check an `--output` value. */
export function outputFormat(value: string | undefined): "text" | "json" {
  const v = value ?? "text";
  if (v !== "text" && v !== "json") throw new ClientError(`--output must be text or json, not ${v}`, { usage: true });
  return v;
}

/** Write `value` as indented JSON on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** An aligned table with upper-case headers; null cells show "-". */
export function printTable(headers: string[], rows: Array<Array<string | number | null | undefined>>): void {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? "-" : String(c))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  process.stdout.write(`${[line(headers.map((h) => h.toUpperCase())), ...cells.map(line)].join("\n")}\n`);
}

/** "3m ago" style age of an RFC 3339 time. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "-";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}
