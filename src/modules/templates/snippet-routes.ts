/**
 * Service snippets: the embedded list and one snippet with its compose fragment, for the compose editor to insert
 * (src/shared/insert-snippet.ts); `?generate=true` adds values for the app's .env, secrets generated here.
 */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { notFound } from "../../lib/errors";
import type { SnippetDetail, SnippetSummary } from "../../shared/snippets";
import { authPlugin } from "../auth/macro";
import { snippetEnv, snippetSummary, snippets } from "./snippets";

export function snippetRoutes(ctx: Ctx) {
  return new Elysia({ name: "snippet-routes", prefix: "/api/snippets" })
    .use(authPlugin(ctx))
    .get("/", async (): Promise<SnippetSummary[]> => [...(await snippets()).values()].map(snippetSummary), {
      auth: { role: "any" },
      detail: { tags: ["templates"], summary: "The embedded service snippets the compose editor inserts" },
    })
    .get(
      "/:id",
      async ({ params, query }): Promise<SnippetDetail> => {
        const s = (await snippets()).get(params.id);
        if (!s) throw notFound();
        return query.generate === "true" ? { ...s, env: snippetEnv(s) } : s;
      },
      {
        auth: { role: "any" },
        query: t.Object({ generate: t.Optional(t.String()) }),
        detail: {
          tags: ["templates"],
          summary: "One snippet with its compose fragment and notes; ?generate=true adds .env values (secrets generated)",
        },
      },
    );
}
