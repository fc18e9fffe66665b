/**
 * Compose variable interpolation (`$VAR`, `${VAR:-default}`, `${VAR:?error}`, `$$`...) over every string value of a
 * document, read exactly as Docker Compose v2 reads it (compose-go `template/template.go`), quirks included. Values
 * come only from the env map given (the app's `.env` plus API env), never from the process.
 *
 * Compose v2 matches, left to right and without overlap,
 *   \$(?i:(\$)|([_a-z][_a-z0-9]*)|{(?:([_a-z][_a-z0-9]*(?::?[-+?](.*))?)}|()))
 * that is `$$`, `$name`, `${name}`, `${name<op><arg>}` or a bare `${` (an invalid-template error). A `$` it does not
 * match (`$`, `$1`, `$ `, `$-`, a trailing `$`) stays as written. In `${name<op><arg>}` the `.*` is greedy, so the
 * match runs to the last `}` of the line; compose then cuts it at the brace closing the first `{` (counting every `{`
 * and skipping the character after one), applies the operator to what is inside, and interpolates what followed the
 * cut again. The operator is the one occurring first in the match, which is always the one right after the name; its
 * argument (default, alternative or error message) is interpolated only when used.
 *
 * The scanner below implements that pattern by hand rather than with a RegExp: the greedy `.*` retried at every
 * `${` made a backtracking engine quadratic on hostile input, and re-interpolating the text after the cut as its own
 * string (what compose does) gives the same result as resuming the scan right after the cut.
 */
import { ComposeError } from "./model";
import { isRecord } from "./values";

/** Variables referenced without a value, collected so the caller can warn. */
export type MissingVars = Set<string>;

/**
 * Letters a name starts with. Compose matches `[_a-z]` case-insensitively with Go's case folding, under which `s`
 * also folds to `ſ` (U+017F) and `k` to the Kelvin sign (U+212A), so those are name letters too.
 */
const NAME_START = /[_A-Za-z\u017F\u212A]/;
const NAME_CHAR = /[_A-Za-z0-9\u017F\u212A]/;

type Operator = ":?" | "?" | ":-" | "-" | ":+" | "+";

/**
 * How deeply defaults may nest (`${A:-${B:-${C}}}` is 3). Compose has no limit; this one only stops hostile input
 * from exhausting the stack.
 */
const MAX_DEPTH = 100;

interface Context {
  env: Record<string, string>;
  missing: MissingVars;
  /** The string the caller asked for, shown in errors. */
  root: string;
}

function invalid(text: string): ComposeError {
  const shown = text.length > 60 ? `${text.slice(0, 60)}...` : text;
  return new ComposeError(
    null,
    "interpolation",
    `invalid interpolation format in ${JSON.stringify(shown)}: you may need to escape any $ with another $`,
  );
}

function lookup(name: string, ctx: Context): string | undefined {
  return Object.hasOwn(ctx.env, name) ? ctx.env[name] : undefined;
}

/** For every index, the index of the last `}` on its line (a `\n` belongs to the line it ends), or -1. */
function lastBracePerLine(text: string): Int32Array {
  const out = new Int32Array(text.length);
  let start = 0;
  let brace = -1;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && text[i] === "}") brace = i;
    if (i === text.length || text[i] === "\n") {
      out.fill(brace, start, Math.min(i + 1, text.length));
      start = i + 1;
      brace = -1;
    }
  }
  return out;
}

/** End (exclusive) of the name starting at `from`, or `from` when no name starts there. */
function nameEnd(text: string, from: number): number {
  if (from >= text.length || !NAME_START.test(text[from])) return from;
  let i = from + 1;
  while (i < text.length && NAME_CHAR.test(text[i])) i++;
  return i;
}

/** Index of the `}` closing the `{` at `open`, counting every `{` and skipping the character after one; -1 if none. */
function closingBrace(text: string, open: number, end: number): number {
  let depth = 0;
  for (let i = open; i < end; i++) {
    if (text[i] === "}" && --depth === 0) return i;
    if (text[i] === "{") {
      depth++;
      i++;
    }
  }
  return -1;
}

/** Apply the operator of `${name<op><arg>}`. */
function applyOperator(name: string, op: Operator, arg: string, ctx: Context, depth: number): string {
  const value = lookup(name, ctx);
  const colon = op.startsWith(":");
  // set, and for the colon forms also non-empty
  const present = value !== undefined && (!colon || value !== "");
  switch (op) {
    case ":-":
    case "-":
      return present ? value! : substitute(arg, ctx, depth + 1);
    case ":+":
    case "+":
      return present ? substitute(arg, ctx, depth + 1) : (value ?? "");
    default: {
      if (present) return value!;
      const reason = substitute(arg, ctx, depth + 1);
      throw new ComposeError(
        null,
        "interpolation",
        `required variable ${name} is missing a value${reason ? `: ${reason}` : ""}`.slice(0, 200),
      );
    }
  }
}

function substitute(text: string, ctx: Context, depth: number): string {
  if (!text.includes("$")) return text;
  if (depth > MAX_DEPTH) throw new ComposeError(null, "interpolation", "variables are nested too deeply");
  let lines: Int32Array | undefined;
  let out = "";
  let last = 0;
  let i = text.indexOf("$");
  while (i >= 0) {
    const next = text[i + 1];
    let resume = -1;
    let value = "";
    if (next === "$") {
      value = "$";
      resume = i + 2;
    } else if (next !== undefined && NAME_START.test(next)) {
      const end = nameEnd(text, i + 1);
      const name = text.slice(i + 1, end);
      const v = lookup(name, ctx);
      if (v === undefined) ctx.missing.add(name);
      value = v ?? "";
      resume = end;
    } else if (next === "{") {
      const start = i + 2;
      const end = nameEnd(text, start);
      if (end === start) throw invalid(ctx.root);
      const name = text.slice(start, end);
      // `:?[-+?]`: an operator, with its argument from `argAt`
      let op: Operator | null = null;
      let argAt = end;
      if (text[end] === ":" && "-+?".includes(text[end + 1] ?? "")) {
        op = `:${text[end + 1]}` as Operator;
        argAt = end + 2;
      } else if ("-+?".includes(text[end] ?? "")) {
        op = text[end] as Operator;
        argAt = end + 1;
      }
      // the greedy `(.*)}` ends at the last `}` of the line, when there is one after the operator
      lines ??= lastBracePerLine(text);
      const greedy = op && argAt < text.length ? lines[argAt] : -1;
      if (op && greedy >= argAt) {
        const close = closingBrace(text, i + 1, greedy + 1);
        const stop = close >= 0 ? close : greedy;
        value = applyOperator(name, op, text.slice(argAt, stop), ctx, depth);
        resume = stop + 1;
      } else if (text[end] === "}") {
        const v = lookup(name, ctx);
        if (v === undefined) ctx.missing.add(name);
        value = v ?? "";
        resume = end + 1;
      } else {
        throw invalid(ctx.root);
      }
    }
    if (resume < 0) {
      // not a reference: the `$` stays as written
      i = text.indexOf("$", i + 1);
      continue;
    }
    out += text.slice(last, i) + value;
    last = resume;
    i = text.indexOf("$", resume);
  }
  return out + text.slice(last);
}

/** Interpolate one string; unset variables become "" and are added to `missing`. */
export function interpolateString(text: string, env: Record<string, string>, missing: MissingVars = new Set()): string {
  return substitute(text, { env, missing, root: text }, 0);
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
