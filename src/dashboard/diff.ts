/**
 * A small structural diff for activity snapshots: objects are compared field by field (dotted paths), and
 * multi-line or structured values that changed get a line diff (longest common subsequence).
 */

export type FieldKind = "added" | "removed" | "changed" | "same";

export interface FieldChange {
  /** Dotted path of the field, e.g. `env.DB_HOST`; `(value)` when a snapshot is not an object. */
  path: string;
  kind: FieldKind;
  before?: unknown;
  after?: unknown;
}

export type LineKind = "same" | "add" | "del";

export interface LineOp {
  kind: LineKind;
  text: string;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function flatten(v: unknown, prefix: string, out: Map<string, unknown>): void {
  if (isPlainObject(v) && Object.keys(v).length > 0) {
    for (const [k, child] of Object.entries(v)) flatten(child, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.set(prefix || "(value)", v);
  }
}

/** Whether two JSON values are equal. */
export function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** Field-by-field comparison of two snapshots; either may be null (nothing before, or nothing after). */
export function diffFields(before: unknown, after: unknown): FieldChange[] {
  const a = new Map<string, unknown>();
  const b = new Map<string, unknown>();
  if (before !== null && before !== undefined) flatten(before, "", a);
  if (after !== null && after !== undefined) flatten(after, "", b);
  const out: FieldChange[] = [];
  for (const [path, v] of a) {
    if (!b.has(path)) out.push({ path, kind: "removed", before: v });
    else {
      const w = b.get(path);
      out.push({ path, kind: sameValue(v, w) ? "same" : "changed", before: v, after: w });
    }
  }
  for (const [path, w] of b) if (!a.has(path)) out.push({ path, kind: "added", after: w });
  return out;
}

/** A value as readable text: strings as they are, everything else as indented JSON. */
export function showValue(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === undefined) return "";
  return JSON.stringify(v, null, 2) ?? String(v);
}

/** Whether a change reads better as a line diff than as old/new values. */
export function wantsLineDiff(before: unknown, after: unknown): boolean {
  return [before, after].some((v) => (typeof v === "string" && v.includes("\n")) || (typeof v === "object" && v !== null));
}

/** Cells of the LCS table above which we stop looking for an optimal alignment. */
const MAX_CELLS = 2_000_000;

/** Line diff of two texts: kept, deleted and added lines in order. */
export function diffLines(a: string, b: string): LineOp[] {
  const x = a === "" ? [] : a.split("\n");
  const y = b === "" ? [] : b.split("\n");
  // the common head and tail need no table
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const xs = x.slice(head, x.length - tail);
  const ys = y.slice(head, y.length - tail);
  const out: LineOp[] = x.slice(0, head).map((text) => ({ kind: "same", text }));
  out.push(...middle(xs, ys));
  out.push(...x.slice(x.length - tail).map((text): LineOp => ({ kind: "same", text })));
  return out;
}

function middle(xs: string[], ys: string[]): LineOp[] {
  const n = xs.length;
  const m = ys.length;
  if (n * m > MAX_CELLS) {
    return [...xs.map((text): LineOp => ({ kind: "del", text })), ...ys.map((text): LineOp => ({ kind: "add", text }))];
  }
  // lcs[i][j]: length of the LCS of xs[i..] and ys[j..]
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = xs[i] === ys[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: LineOp[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (xs[i] === ys[j]) {
      out.push({ kind: "same", text: xs[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ kind: "del", text: xs[i++] });
    else out.push({ kind: "add", text: ys[j++] });
  }
  while (i < n) out.push({ kind: "del", text: xs[i++] });
  while (j < m) out.push({ kind: "add", text: ys[j++] });
  return out;
}
