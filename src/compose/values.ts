/** Small readers for the loosely typed compose document: records, lists, booleans as compose understands them. */

/** Whether a value is a plain mapping (not null, not a list). */
export function isRecord(v: unknown): v is Record<string, any> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A list field that compose also accepts as a single scalar; absent gives []. */
export function asList(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

const TRUE_WORDS = new Set(["true", "yes", "y", "on", "1"]);

/**
 * Whether a value means "on" to either compose engine: a YAML boolean, or a string that YAML 1.1 (compose v1) or
 * compose's own casting reads as true. Used where being wrong would let something unsafe through.
 */
export function truthy(v: unknown): boolean {
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return TRUE_WORDS.has(v.trim().toLowerCase());
  return false;
}

/** A scalar as text (numbers and booleans stringified), null for anything else. */
export function scalarText(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  return null;
}

/** Entries of a `KEY=VALUE` list or a mapping, as [key, value] with value null when absent. */
export function keyValues(v: unknown): [string, string | null][] {
  if (Array.isArray(v)) {
    return v.map((item) => {
      const s = scalarText(item) ?? "";
      const eq = s.indexOf("=");
      return eq < 0 ? [s, null] : [s.slice(0, eq), s.slice(eq + 1)];
    });
  }
  if (isRecord(v)) return Object.entries(v).map(([k, val]) => [k, val === null ? null : (scalarText(val) ?? "")]);
  return [];
}
