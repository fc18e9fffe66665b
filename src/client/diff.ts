/**
 * Line diffs: Myers' O(ND) shortest edit script, rendered as a unified diff (`---`/`+++` headers, `@@` hunks with
 * three lines of context, `\ No newline at end of file` markers) that patch(1) applies.
 */

/** One line of an edit script: kept (" "), removed ("-") or added ("+"). */
export interface Edit {
  op: " " | "-" | "+";
  /** The line with its newline, when it has one. */
  text: string;
}

/** Split text into lines, each keeping its "\n" (a last line without one stays bare). */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n").map((l) => `${l}\n`);
  if (text.endsWith("\n")) lines.pop();
  else lines[lines.length - 1] = lines[lines.length - 1].slice(0, -1);
  return lines;
}

/** The shortest edit script turning `a` into `b` (Myers 1986, greedy forward search with a trace). */
export function diffLines(a: string[], b: string[]): Edit[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice());
    const next = v.slice();
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    v = next;
  }
  // walk the trace back from (n, m), collecting edits in reverse
  const out: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const pv = trace[d];
    const k = x - y;
    const down = k === -d || (k !== d && pv[offset + k - 1] < pv[offset + k + 1]);
    const prevK = down ? k + 1 : k - 1;
    const prevX = pv[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      out.push({ op: " ", text: a[x] });
    }
    if (down) out.push({ op: "+", text: b[--y] });
    else out.push({ op: "-", text: a[--x] });
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    out.push({ op: " ", text: a[x] });
  }
  return out.reverse();
}

const range = (start: number, count: number) => (count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`);

const render = (op: string, text: string) =>
  text.endsWith("\n") ? `${op}${text}` : `${op}${text}\n\\ No newline at end of file\n`;

/**
 * A unified diff from `oldText` to `newText`, or "" when they are equal. `context` lines of context around changes;
 * hunks closer than twice that merge.
 */
export function unifiedDiff(oldText: string, newText: string, names: { old: string; new: string }, context = 3): string {
  if (oldText === newText) return "";
  const edits = diffLines(splitLines(oldText), splitLines(newText));
  const changed = edits.map((e, i) => (e.op === " " ? -1 : i)).filter((i) => i >= 0);
  // group change positions into hunks whose context windows touch
  const groups: Array<[number, number]> = [];
  for (const i of changed) {
    const last = groups[groups.length - 1];
    if (last && i - last[1] <= 2 * context) last[1] = i;
    else groups.push([i, i]);
  }
  let text = `--- ${names.old}\n+++ ${names.new}\n`;
  // line numbers before each edit
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let o = 1;
  let nw = 1;
  for (const e of edits) {
    oldAt.push(o);
    newAt.push(nw);
    if (e.op !== "+") o++;
    if (e.op !== "-") nw++;
  }
  for (const [first, last] of groups) {
    const from = Math.max(0, first - context);
    const to = Math.min(edits.length - 1, last + context);
    const slice = edits.slice(from, to + 1);
    const oldCount = slice.filter((e) => e.op !== "+").length;
    const newCount = slice.filter((e) => e.op !== "-").length;
    text += `@@ -${range(oldAt[from], oldCount)} +${range(newAt[from], newCount)} @@\n`;
    for (const e of slice) text += render(e.op, e.text);
  }
  return text;
}
