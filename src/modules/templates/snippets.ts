/**
 * Service snippets: the embedded YAML files (one service or a few, with their volumes and variables) the compose
 * editor inserts into any app, read and checked once on first use, like the template catalog (catalog.ts).
 */
import { Type as T } from "@sinclair/typebox";
import type { SnippetDetail, SnippetSummary } from "../../shared/snippets";
import { composeNames, IconSchema, IdSchema, readChecked, toVariable, VariableSchema } from "./file-schema";
import { generateSecret } from "./variables";

const SnippetFile = T.Object(
  {
    id: IdSchema,
    name: T.String({ minLength: 1 }),
    description: T.String({ minLength: 1 }),
    category: T.String({ minLength: 1 }),
    icon: IconSchema,
    variables: T.Array(VariableSchema),
    notes: T.String(),
    compose: T.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

/** A snippet as the catalog holds it. */
export type Snippet = Omit<SnippetDetail, "env">;

/** Read one embedded file (its data); throws naming what is wrong. */
export function readSnippet(data: unknown): Snippet {
  const doc = readChecked(SnippetFile, data, "snippet");
  const { services, volumes } = composeNames(doc.compose);
  if (!services.length) throw new Error(`snippet ${JSON.stringify(doc.id)}: compose has no services`);
  return {
    id: doc.id,
    name: doc.name,
    description: doc.description,
    category: doc.category,
    icon: doc.icon.trim(),
    services,
    volumes,
    variables: doc.variables.map(toVariable),
    compose: doc.compose,
    notes: doc.notes,
  };
}

let loaded: Promise<ReadonlyMap<string, Snippet>> | null = null;

/** Every snippet by id, in name order; read on the first call. */
export function snippets(): Promise<ReadonlyMap<string, Snippet>> {
  loaded ??= import("./snippets/index").then(({ SNIPPET_FILES }) => {
    const out = new Map<string, Snippet>();
    for (const s of SNIPPET_FILES.map(readSnippet).sort((a, b) => a.name.localeCompare(b.name))) {
      if (out.has(s.id)) throw new Error(`snippet ${JSON.stringify(s.id)} is in the catalog twice`);
      out.set(s.id, s);
    }
    return out;
  });
  return loaded;
}

/** The list form (no compose text, no notes). */
export function snippetSummary({ compose: _c, notes: _n, ...rest }: Snippet): SnippetSummary {
  return rest;
}

/** Values for the app's .env: each secret generated now, the other variables their default. */
export function snippetEnv(s: Snippet): Record<string, string> {
  const env: Record<string, string> = {};
  for (const v of s.variables)
    env[v.key] =
      v.type === "secret" ? generateSecret(v.generate?.length ?? 32, v.generate?.charset ?? "alphanum") : (v.default ?? "");
  return env;
}
