/**
 * The OpenAPI 3.1 document of every REST route, generated from the routes themselves: TypeBox schemas are JSON
 * Schema already, so bodies, queries and responses come straight from the `t` declarations.
 */
import type { AnyElysia } from "elysia";
import { VERSION } from "../version";

type Schema = Record<string, unknown>;

const strip = (s: unknown): Schema | undefined => (s ? (JSON.parse(JSON.stringify(s)) as Schema) : undefined);

function authText(auth: unknown): string {
  if (auth === undefined) throw new Error("route without an auth declaration");
  if (auth === "public") return "none";
  const a = auth as { role?: string; app?: string; session?: boolean };
  const parts = [
    a.role && a.role !== "any" ? `role ${a.role}` : "any signed-in user",
    a.app ? `app ${a.app} access` : "",
    a.session ? "session cookie only" : "",
  ];
  return parts.filter(Boolean).join(", ");
}

/** Build the document from an app's route list. */
export function openApiDocument(app: AnyElysia): Schema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of app.routes as Array<{ method: string; path: string; hooks: Record<string, any> }>) {
    if (!r.path.startsWith("/api/") || r.method === "WS") continue;
    const path = r.path.replace(/:(\w+)/g, "{$1}").replace(/(.)\/$/, "$1");
    const h = r.hooks ?? {};
    const { "x-sundeck-auth": auth, ...detail } = (h.detail ?? {}) as Record<string, unknown>;
    const params: unknown[] = [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const q = strip(h.query) as { properties?: Record<string, Schema>; required?: string[] } | undefined;
    for (const [name, schema] of Object.entries(q?.properties ?? {})) {
      params.push({ name, in: "query", required: q?.required?.includes(name) ?? false, schema, description: schema.description });
    }
    const op: Record<string, unknown> = {
      ...detail,
      operationId: `${r.method.toLowerCase()}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c) => (c ? c.toUpperCase() : ""))}`,
      "x-sundeck-auth": authText(auth),
      parameters: params,
      responses: {
        [r.method === "POST" && /\/(users|apikeys|setup)\/?$/.test(r.path) ? "201" : "200"]: {
          description: "success",
          ...(h.response ? { content: { "application/json": { schema: strip(h.response) } } } : {}),
        },
        default: {
          description: "error: text/plain, one line starting with the status text",
          content: { "text/plain": { schema: { type: "string" } } },
        },
      },
    };
    if (h.body) op.requestBody = { required: true, content: { "application/json": { schema: strip(h.body) } } };
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Sundeck API", version: VERSION, description: "Self-hosted deployer for Docker Compose apps." },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: {
        session: { type: "apiKey", in: "cookie", name: "session" },
        apiKey: { type: "http", scheme: "bearer", description: "sd_ followed by 64 hex characters" },
      },
    },
    security: [{ session: [] }, { apiKey: [] }],
    paths,
  };
}
