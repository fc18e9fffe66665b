/**
 * YAML of the sync files: written with sorted keys and fixed formatting (an unchanged state is the same bytes, so no
 * commit), read strictly (one document, unique keys, no tags or directives, an alias budget, 1 MiB at most).
 */
import { parseAllDocuments, stringify } from "yaml";

/** Largest sync file read, in bytes. */
export const MAX_FILE_BYTES = 1024 * 1024;

/** The file's text: a header comment, then the data with every mapping's keys sorted. */
export function renderYaml(header: string, data: unknown): string {
  const body = stringify(data, { sortMapEntries: true, lineWidth: 0, indent: 2, version: "1.2", aliasDuplicateObjects: false });
  return `# ${header}\n${body}`;
}

/** A YAML file that could not be read, with the file named. */
export class SyncFileError extends Error {}

/** Parse one sync file to plain data, or throw a SyncFileError naming `file`. */
export function parseYaml(text: string, file: string): unknown {
  if (Buffer.byteLength(text, "utf8") > MAX_FILE_BYTES) throw new SyncFileError(`${file}: larger than 1 MiB`);
  if (/^%/m.test(text)) throw new SyncFileError(`${file}: YAML directives are not allowed`);
  const docs = parseAllDocuments(text, {
    version: "1.2",
    merge: false,
    uniqueKeys: true,
    resolveKnownTags: false,
    prettyErrors: true,
    logLevel: "silent",
  });
  if (!Array.isArray(docs)) throw new SyncFileError(`${file}: empty`);
  if (docs.length !== 1) throw new SyncFileError(`${file}: must hold one YAML document, found ${docs.length}`);
  const doc = docs[0];
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) {
    const line = problem.linePos?.[0]?.line;
    const text = problem.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    throw new SyncFileError(`${file}: invalid yaml${line ? ` at line ${line}` : ""}: ${text.toLowerCase()}`);
  }
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw new SyncFileError(`${file}: invalid yaml: ${(e as Error).message.toLowerCase()}`);
  }
}
