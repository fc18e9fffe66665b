/**
 * Compose variable interpolation (`$VAR`, `${VAR:-default}`, `${VAR:?error}`, `$$`...) over every string value of a
 * document. Values come only from the env map given (the app's `.env` plus API env), never from the process.
 */
import { ComposeError } from "./model";
import { isRecord } from "./values";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
const OPERATORS = [":-", ":?", ":+", "-", "?", "+"] as const;

/** Variables referenced without a value, collected so the caller can warn. */
export type MissingVars = Set<string>;

function invalid(text: string): ComposeError {
  const shown = text.length > 60 ? `${text.slice(0, 60)}...` : text;
  return new ComposeError(null, "interpolation", `invalid interpolation format in "${shown}"`);
}

/** Index of the `}` closing a `${` whose body starts at `from`, counting nested `${...}`. */
function closingBrace(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    if (text[i] === "$" && text[i + 1] === "$") i++;
    else if (text[i] === "$" && text[i + 1] === "{") {
      depth++;
      i++;
    } else if (text[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

function braced(body: string, whole: string, env: Record<string, string>, missing: MissingVars): string {
  const name = NAME.exec(body)?.[0];
  if (!name) throw invalid(whole);
  const rest = body.slice(name.length);
  const value = Object.hasOwn(env, name) ? env[name] : undefined;
  if (rest === "") {
    if (value === undefined) missing.add(name);
    return value ?? "";
  }
  const op = OPERATORS.find((o) => rest.startsWith(o));
  if (!op) throw invalid(whole);
  const arg = () => interpolateString(rest.slice(op.length), env, missing);
  const empty = value === undefined || (op.startsWith(":") && value === "");
  switch (op) {
    case ":-":
    case "-":
      return empty ? arg() : value!;
    case ":+":
    case "+":
      return empty ? "" : arg();
    default: {
      if (!empty) return value!;
      const message = arg();
      throw new ComposeError(
        null,
        "interpolation",
        `required variable ${name} is missing a value${message ? `: ${message}` : ""}`.slice(0, 200),
      );
    }
  }
}

/** Interpolate one string; unset variables become "" and are added to `missing`. */
export function interpolateString(text: string, env: Record<string, string>, missing: MissingVars = new Set()): string {
  if (!text.includes("$")) return text;
  let out = "";
  let i = 0;
  while (i < text.length) {
    const dollar = text.indexOf("$", i);
    if (dollar < 0) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, dollar);
    const next = text[dollar + 1];
    if (next === "$") {
      out += "$";
      i = dollar + 2;
    } else if (next === "{") {
      const end = closingBrace(text, dollar + 2);
      if (end < 0) throw invalid(text);
      out += braced(text.slice(dollar + 2, end), text, env, missing);
      i = end + 1;
    } else {
      const name = NAME.exec(text.slice(dollar + 1))?.[0];
      if (!name) throw invalid(text);
      if (Object.hasOwn(env, name)) out += env[name];
      else missing.add(name);
      i = dollar + 1 + name.length;
    }
  }
  return out;
}

/** Interpolate every string value of a document (mapping keys are left as written); returns a new document. */
export function interpolate<T>(value: T, env: Record<string, string>, missing: MissingVars = new Set()): T {
  if (typeof value === "string") return interpolateString(value, env, missing) as T;
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env, missing)) as T;
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, env, missing);
    return out as T;
  }
  return value;
}
