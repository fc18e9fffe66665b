/**
 * YAML in and out for compose files: YAML 1.2 with merge keys, unique keys, no custom tags and an alias budget on the
 * way in; on the way out, scalars quoted so YAML 1.1 (compose v1) reads exactly what YAML 1.2 (compose v2) reads.
 */
import { Document, isScalar, parseDocument, visit, type YAMLError } from "yaml";
import { ComposeError } from "./model";

/** Largest compose file accepted, in bytes. */
export const MAX_COMPOSE_BYTES = 1024 * 1024;
/** Alias expansions allowed while reading (defeats "billion laughs" documents). */
export const MAX_ALIAS_COUNT = 200;

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
  const doc = parseDocument(text, {
    version: "1.2",
    merge: true,
    uniqueKeys: true,
    resolveKnownTags: false,
    prettyErrors: true,
    logLevel: "silent",
  });
  if (doc.errors.length) throw yamlError(doc.errors[0], file);
  const tagWarning = doc.warnings.find((w) => w.code === "TAG_RESOLVE_FAILED");
  if (tagWarning) throw yamlError(tagWarning, file);
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

/** Serialise plain data as block YAML that compose v1 (YAML 1.1) and v2 (YAML 1.2) read identically. */
export function dumpYaml(data: unknown): string {
  const doc = new Document(data, { aliasDuplicateObjects: false, compat: "yaml-1.1" });
  // a bare `=` is YAML 1.1's "value" tag, which PyYAML cannot construct
  visit(doc, {
    Scalar(_key, node) {
      if (isScalar(node) && node.value === "=") node.type = "QUOTE_DOUBLE";
    },
  });
  return doc.toString({ lineWidth: 0 });
}
