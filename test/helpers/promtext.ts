/**
 * A strict reader of the Prometheus text format 0.0.4 for tests: it throws on anything a scraper could refuse or
 * misread (a bad name, label or escape, a sample before its TYPE, a family written twice or interleaved, a series
 * repeated, a counter without `_total`, histogram buckets out of order, not cumulative, or not ending in `+Inf` equal
 * to `_count`), and hands back the families for assertions. `promtool` runs the official parser on the same text.
 */

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string | null;
  samples: PromSample[];
}

const METRIC = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function parseValue(s: string, line: string): number {
  if (s === "NaN") return Number.NaN;
  if (s === "+Inf") return Number.POSITIVE_INFINITY;
  if (s === "-Inf") return Number.NEGATIVE_INFINITY;
  if (!FLOAT.test(s)) throw new Error(`bad value ${JSON.stringify(s)} in: ${line}`);
  return Number(s);
}

/** `{a="x",b="y"}` from position `i` (at the brace); returns the labels and the position after the closing brace. */
function parseLabels(line: string, i: number): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  i++;
  while (line[i] !== "}") {
    const eq = line.indexOf("=", i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = line.slice(i, eq);
    if (!LABEL.test(name) || name.startsWith("__")) throw new Error(`bad label name ${JSON.stringify(name)} in: ${line}`);
    if (name in labels) throw new Error(`label ${name} repeated in: ${line}`);
    if (line[eq + 1] !== '"') throw new Error(`label value not quoted in: ${line}`);
    let v = "";
    let j = eq + 2;
    for (;;) {
      const c = line[j];
      if (c === undefined) throw new Error(`unterminated label value in: ${line}`);
      if (c === '"') break;
      if (c === "\\") {
        const n = line[j + 1];
        if (n === "\\") v += "\\";
        else if (n === '"') v += '"';
        else if (n === "n") v += "\n";
        else throw new Error(`bad escape \\${n} in: ${line}`);
        j += 2;
        continue;
      }
      v += c;
      j++;
    }
    labels[name] = v;
    i = j + 1;
    if (line[i] === ",") i++;
    else if (line[i] !== "}") throw new Error(`expected , or } in: ${line}`);
  }
  return [labels, i + 1];
}

const seriesKey = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(",")}}`;

/** The family a sample name belongs to, given the families declared so far. */
function familyOf(name: string, types: Map<string, PromFamily>): PromFamily | undefined {
  const direct = types.get(name);
  if (direct && direct.type !== "histogram") return direct;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!name.endsWith(suffix)) continue;
    const f = types.get(name.slice(0, -suffix.length));
    if (f?.type === "histogram") return f;
  }
  return undefined;
}

function checkHistogram(f: PromFamily): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; sum?: number; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = seriesKey("", rest);
    const g = groups.get(key) ?? { buckets: [] };
    groups.set(key, g);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}_bucket without le`);
      g.buckets.push([parseValue(le, `le of ${f.name}`), s.value]);
    } else if (s.name === `${f.name}_sum`) g.sum = s.value;
    else g.count = s.value;
  }
  for (const [key, g] of groups) {
    const where = `${f.name}${key}`;
    if (g.buckets.length === 0 || g.sum === undefined || g.count === undefined)
      throw new Error(`${where}: histogram needs buckets, _sum and _count`);
    for (let i = 1; i < g.buckets.length; i++) {
      if (!(g.buckets[i][0] > g.buckets[i - 1][0])) throw new Error(`${where}: le not increasing`);
      if (g.buckets[i][1] < g.buckets[i - 1][1]) throw new Error(`${where}: buckets not cumulative`);
    }
    const last = g.buckets.at(-1)!;
    if (last[0] !== Number.POSITIVE_INFINITY) throw new Error(`${where}: last bucket is not +Inf`);
    if (last[1] !== g.count) throw new Error(`${where}: +Inf bucket ${last[1]} != _count ${g.count}`);
  }
}

/** Parse and check an exposition; throws with the reason on the first problem. */
export function parseExposition(text: string): Map<string, PromFamily> {
  if (text.length > 0 && !text.endsWith("\n")) throw new Error("the last line must end with a line feed");
  const families = new Map<string, PromFamily>();
  const helps = new Map<string, string>();
  const finished = new Set<string>();
  const series = new Set<string>();
  let current: PromFamily | null = null;
  for (const line of text.split("\n").slice(0, -1)) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest] = m;
      if (!METRIC.test(name)) throw new Error(`bad metric name in: ${line}`);
      if (kind === "HELP") {
        if (helps.has(name)) throw new Error(`HELP repeated for ${name}`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ""))) throw new Error(`bad escape in HELP of ${name}`);
        helps.set(
          name,
          rest.replace(/\\(\\|n)/g, (_, c) => (c === "n" ? "\n" : "\\")),
        );
        const f = families.get(name);
        if (f) f.help = helps.get(name)!;
        continue;
      }
      if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) throw new Error(`bad type in: ${line}`);
      if (families.has(name)) throw new Error(`TYPE repeated for ${name}`);
      if (rest === "counter" && !name.endsWith("_total")) throw new Error(`counter ${name} does not end in _total`);
      if (rest !== "counter" && name.endsWith("_total")) throw new Error(`${rest} ${name} ends in _total`);
      if (current) finished.add(current.name);
      current = { name, type: rest as PromFamily["type"], help: helps.get(name) ?? null, samples: [] };
      families.set(name, current);
      continue;
    }
    const name = /^[^{ ]+/.exec(line)?.[0] ?? "";
    if (!METRIC.test(name)) throw new Error(`bad metric name in: ${line}`);
    let labels: Record<string, string> = {};
    let i = name.length;
    if (line[i] === "{") [labels, i] = parseLabels(line, i);
    if (line[i] !== " ") throw new Error(`expected one space before the value in: ${line}`);
    const rest = line.slice(i + 1).split(" ");
    if (rest.length > 2 || (rest.length === 2 && !/^-?\d+$/.test(rest[1]))) throw new Error(`bad value or timestamp in: ${line}`);
    const value = parseValue(rest[0], line);
    const f = familyOf(name, families);
    if (!f) throw new Error(`sample before its TYPE line: ${line}`);
    if (f !== current || finished.has(f.name)) throw new Error(`family ${f.name} interleaved with another: ${line}`);
    if (f.type === "counter" && !(value >= 0)) throw new Error(`negative counter: ${line}`);
    if ("le" in labels && f.type !== "histogram") throw new Error(`le label outside a histogram: ${line}`);
    const key = seriesKey(name, labels);
    if (series.has(key)) throw new Error(`series repeated: ${line}`);
    series.add(key);
    f.samples.push({ name, labels, value });
  }
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

/** `promtool check metrics` on the text: the official parser and linter; resolves with its complaints ("" when none). */
export async function promtoolCheck(text: string): Promise<string> {
  if (!Bun.which("promtool")) throw new Error("promtool is missing: apt-get install prometheus (.ci/run does)");
  const p = Bun.spawn(["promtool", "check", "metrics"], { stdin: new Blob([text]), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return code === 0 ? "" : `${out}${err}`.trim() || `promtool exited ${code}`;
}
