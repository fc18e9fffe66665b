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
 * The files are read with Bun's native YAML reader, not the yaml package: its JavaScript parser, run over the whole
 * catalog, is compiled by the JIT and leaves megabytes of allocator pages behind (docs/benchmarks.md, "Templates and
 * snippets"). The catalog tests hold the two readers to the same result for every file.
 */
export const readYaml = (text: string): unknown => Bun.YAML.parse(text);

/** Parse `text` and check it against `schema`; throws `<kind> "<id>": <path> <problem>`. */
export function readChecked<S extends TSchema>(schema: S, text: string, kind: string): Static<S> {
  const doc = readYaml(text);
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

/** The services and top-level volumes a compose text declares, in file order. */
export function composeNames(compose: string): { services: string[]; volumes: string[] } {
  const doc = readYaml(compose) as { services?: Record<string, unknown>; volumes?: Record<string, unknown> } | null;
  return { services: Object.keys(doc?.services ?? {}), volumes: Object.keys(doc?.volumes ?? {}) };
}
