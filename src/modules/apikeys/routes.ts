/** Routes of the caller's API keys. Creating a key needs a real session: a key cannot mint keys. */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { noContent, parseId, withStatus } from "../../http/respond";
import { notFound } from "../../lib/errors";
import { authPlugin } from "../auth/macro";

/** /api/apikeys */
export function apiKeyRoutes(ctx: Ctx) {
  return new Elysia({ name: "apikey-routes", prefix: "/api/apikeys" })
    .use(authPlugin(ctx))
    .get(
      "/",
      ({ principal, query }) =>
        ctx.apiKeys.list(query.all === "true" && principal.user.role === "super_admin" ? null : principal.user.id),
      {
        auth: { role: "any" },
        query: t.Object({ all: t.Optional(t.String({ description: "true: every user's keys (super-admin)" })) }),
        detail: { tags: ["apikeys"], summary: "List the caller's API keys" },
      },
    )
    .post(
      "/",
      ({ principal, actor, body, set }) =>
        withStatus(set, 201, ctx.apiKeys.create(principal.user, body.name, body.expires_at ?? null, actor)),
      {
        auth: { role: "any", session: true },
        body: t.Object({ name: t.String(), expires_at: t.Optional(t.Union([t.String(), t.Null()])) }),
        detail: { tags: ["apikeys"], summary: "Create an API key for the caller; the key is shown once" },
      },
    )
    .delete(
      "/:id",
      ({ params, principal, actor, set }) => {
        const id = parseId(params.id);
        if (id === null) throw notFound();
        ctx.apiKeys.revoke(id, { id: principal.user.id, mayRevokeAny: principal.user.role === "super_admin" }, actor);
        return noContent(set);
      },
      { auth: { role: "any" }, detail: { tags: ["apikeys"], summary: "Revoke an API key" } },
    );
}
