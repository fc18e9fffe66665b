/**
 * Checks the browser can make before anything is sent: the slug rule, a YAML parse of the compose file with a few
 * structural checks, and env names. The server's compose safety rules are the real validation (a refused deploy
 * writes nothing), so nothing here tries to repeat them.
 */
import { type Document, isMap as isYamlMap, LineCounter, parseDocument } from "yaml";
import { SLUG_MAX, SLUG_PATTERN } from "../../../shared/slug";

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why `slug` is not a valid app slug, or null. */
export function slugProblem(slug: string): string | null {
  if (slug === "") return "Enter a slug";
  if (slug.length > SLUG_MAX) return `The slug has ${slug.length} characters; at most ${SLUG_MAX} are allowed`;
  if (!SLUG_PATTERN.test(slug)) return "Use lowercase letters and digits, with single dashes between them (my-app-2)";
  return null;
}

/** A problem found in the compose text; `line` is 1-based when known. */
export interface Problem {
  line?: number;
  message: string;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Problems of a compose file that the browser can see: YAML syntax and the basic shape. Empty when none. */
export function composeProblems(text: string): Problem[] {
  if (text.trim() === "") return [{ message: "The compose file is empty" }];
  const lc = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter: lc });
  const lineOf = (path: string[]) => keyLine(doc, lc, path);
  if (doc.errors.length > 0) {
    return doc.errors.map((e) => ({
      line: e.linePos?.[0].line,
      message: e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, ""),
    }));
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return [{ message: (e as Error).message }];
  }
  if (!isMap(data)) return [{ line: 1, message: "The file must be a mapping with a services key" }];
  const services = data.services;
  if (!isMap(services) || Object.keys(services).length === 0) {
    return [{ line: lineOf(["services"]), message: "services must be a mapping with at least one service" }];
  }
  const out: Problem[] = [];
  for (const [name, svc] of Object.entries(services)) {
    const at = lineOf(["services", name]);
    if (!isMap(svc)) {
      out.push({ line: at, message: `service "${name}" must be a mapping` });
      continue;
    }
    if (svc.image === undefined && svc.build === undefined) out.push({ line: at, message: `service "${name}" has no image` });
    if (svc.ports !== undefined && !Array.isArray(svc.ports)) {
      out.push({ line: lineOf(["services", name, "ports"]), message: `service "${name}": ports must be a list` });
    }
  }
  return out;
}

/** 1-based line of the key at `path` (["services", "web"]), when the document has it. */
function keyLine(doc: Document, lc: LineCounter, path: string[]): number | undefined {
  const parent = path.length > 1 ? doc.getIn(path.slice(0, -1), true) : doc.contents;
  if (!isYamlMap(parent)) return undefined;
  const pair = parent.items.find((p) => (p.key as { value?: unknown } | null)?.value === path[path.length - 1]);
  const range = (pair?.key as { range?: [number, number, number] } | null)?.range;
  return range ? lc.linePos(range[0]).line : undefined;
}

/** A row of the env editor. */
export interface EnvRow {
  id: number;
  key: string;
  value: string;
}

/** Problems of env rows (bad or repeated names), by row id. */
export function envProblems(rows: EnvRow[]): Map<number, string> {
  const out = new Map<number, string>();
  const seen = new Set<string>();
  for (const r of rows) {
    const key = r.key.trim();
    if (key === "" && r.value === "") continue;
    if (!ENV_KEY.test(key))
      out.set(r.id, `"${key}" is not a valid variable name (letters, digits, _; not starting with a digit)`);
    else if (seen.has(key)) out.set(r.id, `${key} is set twice`);
    seen.add(key);
  }
  return out;
}

let rowIds = 0;

/** Rows for an env object (sorted by name). */
export function toRows(env: Record<string, string | null>): EnvRow[] {
  return Object.keys(env)
    .sort()
    .map((key) => ({ id: ++rowIds, key, value: env[key] ?? "" }));
}

/** A new empty row. */
export const emptyRow = (): EnvRow => ({ id: ++rowIds, key: "", value: "" });

/** The env object of rows (empty rows dropped). */
export function fromRows(rows: EnvRow[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const r of rows) if (r.key.trim() !== "") env[r.key.trim()] = r.value;
  return env;
}
