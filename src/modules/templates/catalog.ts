/**
 * The template catalog: the embedded YAML files read and checked once, on first use (a server that never shows a
 * template never holds them). A file that does not hold a well-formed template stops the load with its id named: the
 * catalog test reads every file the same way, so that never reaches a release.
 */
import { type Static, Type as T } from "@sinclair/typebox";
import { BACKUP_STRATEGIES } from "../../shared/backups";
import type { TemplateDetail, TemplateSummary } from "../../shared/templates";
import { composeNames, IconSchema, IdSchema, readChecked, toVariable, VariableSchema } from "./file-schema";

const TemplateFile = T.Object(
  {
    id: IdSchema,
    name: T.String({ minLength: 1 }),
    description: T.String({ minLength: 1 }),
    category: T.String({ minLength: 1 }),
    tags: T.Array(T.String({ minLength: 1 })),
    version: T.Integer({ minimum: 1 }),
    icon: IconSchema,
    web: T.Union([T.Object({ service: T.String(), port: T.Integer({ minimum: 1, maximum: 65535 }) }), T.Null()]),
    /** The data worth a daily backup: the service and the backup strategy that reads it. */
    database: T.Optional(
      T.Object(
        { service: T.String(), strategy: T.Union(BACKUP_STRATEGIES.map((s) => T.Literal(s))) },
        { additionalProperties: false },
      ),
    ),
    variables: T.Array(VariableSchema),
    notes: T.String(),
    compose: T.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

export type TemplateFileData = Static<typeof TemplateFile>;

/** A template as the catalog holds it. */
export type Template = TemplateDetail;

/** Read one embedded file (its data); throws naming what is wrong. */
export function readTemplate(data: unknown): Template {
  const doc = readChecked(TemplateFile, data, "template");
  const { services } = composeNames(doc.compose);
  return {
    id: doc.id,
    name: doc.name,
    description: doc.description,
    category: doc.category,
    tags: doc.tags,
    services,
    variables: doc.variables.map(toVariable),
    version: doc.version,
    icon: doc.icon.trim(),
    web: doc.web,
    database: doc.database ?? null,
    compose: doc.compose,
    notes: doc.notes,
  };
}

let loaded: Promise<ReadonlyMap<string, Template>> | null = null;

/** Every template by id, in name order; read on the first call. */
export function catalog(): Promise<ReadonlyMap<string, Template>> {
  loaded ??= import("./catalog/index").then(({ TEMPLATE_FILES }) => {
    const list = TEMPLATE_FILES.map(readTemplate).sort((a, b) => a.name.localeCompare(b.name));
    const out = new Map<string, Template>();
    for (const t of list) {
      if (out.has(t.id)) throw new Error(`template ${JSON.stringify(t.id)} is in the catalog twice`);
      out.set(t.id, t);
    }
    return out;
  });
  return loaded;
}

/** The list form of a template (no compose text, no notes). */
export function summary(t: Template): TemplateSummary {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    category: t.category,
    tags: t.tags,
    services: t.services,
    variables: t.variables,
    version: t.version,
    icon: t.icon,
    web: t.web,
    database: t.database,
  };
}

/** The detail form (GET /api/templates/{id}). */
export function detail(t: Template): TemplateDetail {
  return { ...summary(t), compose: t.compose, notes: t.notes };
}
