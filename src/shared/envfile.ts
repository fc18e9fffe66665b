/**
 * The app's `.env`: read and written with the dotenv rules docker compose uses (`export` prefix, comments, single
 * quotes literal, double quotes with escapes, inline ` #` comments on unquoted values). No variable expansion inside.
 * Pure: the server (src/compose/envfile.ts) and the dashboard read and write it the same way.
 */
/** A line that is not valid `.env` text, or a name that cannot be written; the message says which. */
export class EnvFileError extends Error {}

/** Names an env file may define. */
export const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

const DOUBLE_ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", "\\": "\\", '"': '"', $: "$" };

function invalid(line: number, why: string): EnvFileError {
  return new EnvFileError(`invalid env file line ${line}: ${why}`);
}

/** Read a quoted value starting after its opening quote; returns the value and the index after the closing quote. */
function readQuoted(text: string, start: number, quote: string, line: number): { value: string; end: number } {
  let value = "";
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === quote) return { value, end: i + 1 };
    if (quote === '"' && c === "\\" && i + 1 < text.length) {
      const next = text[++i];
      value += DOUBLE_ESCAPES[next] ?? `\\${next}`;
      continue;
    }
    value += c;
  }
  throw invalid(line, "unterminated quoted value");
}

/** Parse `.env` text into a map; a line that is not a comment, blank, or `KEY=VALUE` is an EnvFileError naming it. */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  const src = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  let pos = 0;
  let line = 1;
  while (pos < src.length) {
    let eol = src.indexOf("\n", pos);
    if (eol < 0) eol = src.length;
    const raw = src.slice(pos, eol);
    const startLine = line;
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("#")) {
      pos = eol + 1;
      line++;
      continue;
    }
    const lead = raw.length - raw.trimStart().length;
    const exported = /^export\s+/.exec(trimmed)?.[0].length ?? 0;
    const body = trimmed.slice(exported);
    const eq = body.indexOf("=");
    if (eq < 0) throw invalid(startLine, "expected KEY=VALUE");
    const key = body.slice(0, eq).trim();
    if (!ENV_KEY.test(key)) throw invalid(startLine, "invalid variable name");
    // work on the source so quoted values may span lines
    const valueStart = pos + lead + exported + eq + 1;
    let i = valueStart;
    while (src[i] === " " || src[i] === "\t") i++;
    const q = src[i];
    if (q === '"' || q === "'") {
      const { value, end } = readQuoted(src, i + 1, q, startLine);
      let restEnd = src.indexOf("\n", end);
      if (restEnd < 0) restEnd = src.length;
      const rest = src.slice(end, restEnd).trim();
      if (rest !== "" && !rest.startsWith("#")) throw invalid(startLine, "unexpected text after quoted value");
      env[key] = value;
      line += src.slice(pos, restEnd).split("\n").length;
      pos = restEnd + 1;
      continue;
    }
    let value = src.slice(i, eol);
    const comment = value.search(/\s#/);
    if (comment >= 0) value = value.slice(0, comment);
    env[key] = value.trim();
    pos = eol + 1;
    line++;
  }
  return env;
}

const PLAIN = /^[A-Za-z0-9_./:@%+,=-]*$/;

/** Quote a value so that parseEnvFile (and compose) read it back unchanged. */
function formatValue(value: string): string {
  if (PLAIN.test(value)) return value;
  if (!value.includes("'") && !/[\r\n]/.test(value)) return `'${value}'`;
  const escaped = value.replace(/[\\"$\n\r]/g, (c) => ({ "\\": "\\\\", '"': '\\"', $: "\\$", "\n": "\\n", "\r": "\\r" })[c]!);
  return `"${escaped}"`;
}

/** Write a map as `.env` text, one `KEY=VALUE` per line, quoting values where needed; keys must be valid names. */
export function formatEnvFile(env: Record<string, string>): string {
  const lines = Object.entries(env).map(([key, value]) => {
    if (!ENV_KEY.test(key)) throw new EnvFileError(`invalid variable name "${key.slice(0, 64)}"`);
    return `${key}=${formatValue(String(value))}`;
  });
  return lines.length ? `${lines.join("\n")}\n` : "";
}
