/**
 * What the embedded catalog files (templates and service snippets) have in common: the variable shape, ids and icons,
 * the check of one file against its schema, and the names a compose text declares.
 */
import { type Static, Type as T, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { SECRET_CHARSETS, type TemplateVariable, VARIABLE_TYPES } from "../../shared/templates";

export const VariableSchema = T.Object(
  {
    key: T.String({ pattern: "^[A-Z][A-Z0-9_]*$" }),
    label: T.String({ minLength: 1 }),
    type: T.Union(VARIABLE_TYPES.map((t) => T.Literal(t))),
    required: T.Boolean(),
    default: T.Optional(T.String()),
    help: T.Optional(T.String()),
    generate: T.Optional(
      T.Object(
        { length: T.Integer({ minimum: 8, maximum: 256 }), charset: T.Union(SECRET_CHARSETS.map((c) => T.Literal(c))) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const IdSchema = T.String({ pattern: "^[a-z0-9]+(-[a-z0-9]+)*$", maxLength: 40 });
/** An SVG image, inline. */
export const IconSchema = T.String({ pattern: "^<svg[\\s\\S]*</svg>\\s*$" });

/**
 * Bun's YAML reader: the bundler's, which reads the embedded files at build time, and Bun.YAML, which the tests use on
 * the files' text. The catalog tests hold it to the yaml package's result for every file.
 */
export const readYaml = (text: string): unknown => Bun.YAML.parse(text);

/** Check a file's data (its `.yml` import) against `schema`; throws `<kind> "<id>": <path> <problem>`. */
export function readChecked<S extends TSchema>(schema: S, doc: unknown, kind: string): Static<S> {
  if (!Value.Check(schema, doc)) {
    const first = Value.Errors(schema, doc).First();
    const id = (doc as { id?: unknown })?.id;
    throw new Error(`${kind} ${JSON.stringify(id ?? "?")}: ${first?.path || "(root)"} ${first?.message ?? "is malformed"}`);
  }
  return doc;
}

/** A file's variable as the wire carries it (absent fields null). */
export function toVariable(v: Static<typeof VariableSchema>): TemplateVariable {
  return {
    key: v.key,
    label: v.label,
    type: v.type,
    required: v.required,
    default: v.default ?? null,
    help: v.help ?? null,
    ...(v.generate ? { generate: v.generate } : {}),
  };
}

/** A top-level key of a block-style file (`services:` at the start of a line). */
const TOP_KEY = /^([A-Za-z_][\w-]*):\s*(?:#.*)?$/;
/** A key one indentation level in (`  web:`; `  pgdata: {}` or `  web: # note` too). */
const CHILD_KEY = /^( +)([A-Za-z0-9][\w.-]*):(?:\s.*)?$/;

/**
 * The services and top-level volumes a compose text declares, in file order, read from its lines without parsing
 * YAML: the embedded files are block style (the catalog tests hold this to a YAML reader's keys for every file).
 */
export function composeNames(compose: string): { services: string[]; volumes: string[] } {
  const out: Record<string, string[]> = { services: [], volumes: [] };
  let section: string[] | null = null;
  let indent = -1;
  for (const line of compose.split("\n")) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const top = TOP_KEY.exec(line);
    if (top || !line.startsWith(" ")) {
      section = top ? (out[top[1]] ?? null) : null;
      indent = -1;
      continue;
    }
    const child = section && CHILD_KEY.exec(line);
    if (!child) continue;
    if (indent < 0) indent = child[1].length;
    if (child[1].length === indent) section!.push(child[2]);
  }
  return { services: out.services, volumes: out.volumes };
}
