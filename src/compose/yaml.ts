/**
 * YAML in and out for compose files: YAML 1.2 with merge keys, unique keys, no custom tags and an alias budget on the
 * way in; on the way out, scalars quoted so YAML 1.1 (compose v1) reads exactly what YAML 1.2 (compose v2) reads.
 */
import { Document, isScalar, parseAllDocuments, type ScalarTag, visit, type YAMLError } from "yaml";
import { checkRawText } from "./characters";
import { ComposeError } from "./model";

/** Largest compose file accepted, in bytes. */
export const MAX_COMPOSE_BYTES = 1024 * 1024;
/** Alias expansions allowed while reading (defeats "billion laughs" documents). */
export const MAX_ALIAS_COUNT = 200;

/**
 * `0400` is octal to both compose engines (go-yaml resolves integers like Go's ParseInt with base 0, PyYAML reads
 * YAML 1.1), but decimal to a YAML 1.2 reader: file modes such as `mode: 0400` would otherwise run as 400.
 */
const LEADING_ZERO_OCTAL: ScalarTag = {
  identify: (v) => typeof v === "number",
  default: true,
  tag: "tag:yaml.org,2002:int",
  format: "OCT",
  test: /^0[0-7]+$/,
  resolve: (s: string) => Number.parseInt(s, 8),
};

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split("\n").length;
}

function yamlError(e: YAMLError, file: string): ComposeError {
  const line = e.linePos?.[0]?.line;
  let text = e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
  text = text.charAt(0).toLowerCase() + text.slice(1);
  const where = file ? `${file}: ` : "";
  return new ComposeError(null, "yaml", `${where}invalid yaml${line ? ` at line ${line}` : ""}: ${text}`);
}

/** Parse one YAML document to plain data; any syntax error, duplicate key or unknown tag is a ComposeError. */
export function loadYaml(text: string, file = ""): unknown {
  if (Buffer.byteLength(text, "utf8") > MAX_COMPOSE_BYTES) {
    throw new ComposeError(null, "yaml", `${file ? `${file}: ` : ""}compose file is larger than 1 MiB`);
  }
  checkRawText(text, file);
  // a %YAML 1.1 directive would switch this reader's schema while compose v2 keeps its own
  const directive = /^%/m.exec(text);
  if (directive) {
    const line = lineOf(text, directive.index);
    throw new ComposeError(null, "yaml", `${file ? `${file}: ` : ""}YAML directives (line ${line}) are not allowed`);
  }
  // every document: compose v2 reads all of them, and `logLevel: "silent"` hides the multiple-documents error
  const docs = parseAllDocuments(text, {
    version: "1.2",
    customTags: (tags) => [LEADING_ZERO_OCTAL, ...tags],
    merge: true,
    uniqueKeys: true,
    resolveKnownTags: false,
    prettyErrors: true,
    logLevel: "silent",
  });
  if (!Array.isArray(docs) || docs.length === 0) return null;
  if (docs.length > 1) {
    const line = docs[1].range ? lineOf(text, docs[1].range[0]) : null;
    throw new ComposeError(
      null,
      "yaml",
      `${file ? `${file}: ` : ""}a compose file must hold one YAML document, found ${docs.length}${line ? ` (the second starts at line ${line})` : ""}`,
    );
  }
  const doc = docs[0];
  if (doc.errors.length) throw yamlError(doc.errors[0], file);
  const tagWarning = doc.warnings.find((w) => w.code === "TAG_RESOLVE_FAILED");
  if (tagWarning) throw yamlError(tagWarning, file);
  // `uniqueKeys` lets `<<` repeat; readers then keep the first (yaml), the last (PyYAML) or refuse (go-yaml)
  visit(doc, {
    Map(_key, map) {
      const merges = map.items.filter((p) => isScalar(p.key) && typeof p.key.value === "symbol");
      if (merges.length > 1) {
        const line =
          merges[1].key && isScalar(merges[1].key) && merges[1].key.range ? lineOf(text, merges[1].key.range[0]) : null;
        throw new ComposeError(
          null,
          "yaml",
          `${file ? `${file}: ` : ""}invalid yaml${line ? ` at line ${line}` : ""}: duplicate merge key <<`,
        );
      }
    },
  });
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (/alias/i.test(message)) {
      throw new ComposeError(null, "yaml", `${file ? `${file}: ` : ""}invalid yaml: too many aliases`);
    }
    throw new ComposeError(null, "yaml", `${file ? `${file}: ` : ""}invalid yaml: ${message.toLowerCase()}`);
  }
}

/**
 * Strings written without quotes: a letter or `_` first, then letters, digits and `_.-/`, and no word YAML 1.1 reads
 * as a boolean or null. Everything else is double-quoted and escaped, so no reader can take it for another type, a
 * comment, an indicator or a line break.
 */
const PLAIN = /^[A-Za-z_][A-Za-z0-9_./-]*$/;
const YAML11_WORDS = /^(y|yes|n|no|true|false|on|off|null)$/i;

/** Whether a string may be written as a plain scalar. */
export function plainSafe(s: string): boolean {
  return PLAIN.test(s) && !YAML11_WORDS.test(s);
}

/** Serialise plain data as block YAML that compose v1 (YAML 1.1) and v2 (YAML 1.2) read identically. */
export function dumpYaml(data: unknown): string {
  const doc = new Document(data, { aliasDuplicateObjects: false, compat: "yaml-1.1" });
  visit(doc, {
    Scalar(_key, node) {
      if (isScalar(node) && typeof node.value === "string" && !plainSafe(node.value)) node.type = "QUOTE_DOUBLE";
    },
  });
  // one-line JSON-style escapes: the library's folded multi-line double quotes lose spaces around line breaks
  return doc.toString({ lineWidth: 0, doubleQuotedAsJSON: true, doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER });
}
