/**
 * Characters compose files may not carry. YAML 1.1 readers (compose v1's PyYAML) and go-yaml (compose v2) treat NEL,
 * LINE SEPARATOR and PARAGRAPH SEPARATOR as line breaks where YAML 1.2 does not, and control characters are read
 * differently (or refused) by each reader: one of them in a file or value would let compose read something other
 * than what was checked. They are refused in the raw text of every file and in every key and value after
 * interpolation (values from `.env` included).
 */
import { ComposeError } from "./model";
import { isRecord } from "./values";

/** Never allowed: C0 controls but tab, LF and CR, DEL, C1 controls (NEL among them), LS, PS, BOM, U+FFFE/U+FFFF, lone surrogates. */
const FORBIDDEN =
  /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Also refused in keys and in the raw text: line breaks other than LF (and CRLF in raw text), tabs in keys. */
const FORBIDDEN_IN_KEY = /[\t\n\r]/;

const NAMES: Record<number, string> = {
  133: "NEL (next line)",
  8232: "LINE SEPARATOR",
  8233: "PARAGRAPH SEPARATOR",
  65279: "BYTE ORDER MARK",
  13: "carriage return",
  9: "tab",
  10: "line feed",
};

function describe(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  const name = NAMES[code] ?? (code >= 0xd800 && code <= 0xdfff ? "lone surrogate" : "control character");
  return `${hex} (${name})`;
}

/** Throw when the raw text of a compose file holds a character its readers disagree on. A leading BOM is allowed. */
export function checkRawText(text: string, file = ""): void {
  const body = text.startsWith("\ufeff") ? text.slice(1) : text;
  // a CR is only allowed as part of a CRLF line end
  const m = FORBIDDEN.exec(body) ?? /\r(?!\n)/.exec(body);
  if (!m) return;
  const before = body.slice(0, m.index);
  const line = before.split("\n").length;
  const column = m.index - before.lastIndexOf("\n");
  const where = file ? `${file}: ` : "";
  throw new ComposeError(
    null,
    "characters",
    `${where}character ${describe(m[0])} at line ${line}, column ${column} is not allowed in compose files`,
  );
}

/** The first forbidden character of a value or key, or null. */
function badCharacter(s: string, key: boolean): string | null {
  return (FORBIDDEN.exec(s) ?? (key ? FORBIDDEN_IN_KEY.exec(s) : null))?.[0] ?? null;
}

/** Throw when any key or string value of an interpolated document holds a forbidden character; names the path. */
export function checkDocumentText(doc: Record<string, any>, note = ""): void {
  const visit = (node: unknown, path: string[]): void => {
    if (typeof node === "string") {
      const bad = badCharacter(node, false);
      if (bad) fail(path, bad);
    } else if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) visit(node[i], [...path, String(i)]);
    } else if (isRecord(node)) {
      for (const [k, v] of Object.entries(node)) {
        const bad = badCharacter(k, true);
        if (bad) fail([...path, k], bad);
        visit(v, [...path, k]);
      }
    }
  };
  const fail = (path: string[], ch: string): never => {
    const service = path[0] === "services" && path.length > 1 ? path[1] : null;
    const shown = (service ? path.slice(2) : path).map((p) => (/^[\w.-]*$/.test(p) ? p : JSON.stringify(p))).join(".");
    throw new ComposeError(service, "characters", `${shown || "key"} contains ${describe(ch)}, which is not allowed${note}`);
  };
  visit(doc, []);
}
