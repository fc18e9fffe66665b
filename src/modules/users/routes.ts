/** Routes of user management and app grants; super-admin only. */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { noContent, parseId, withStatus } from "../../http/respond";
import { notFound } from "../../lib/errors";
import { authPlugin } from "../auth/macro";
import { newUserJson, userJson } from "./service";

const SUPER = { role: "super_admin" } as const;
const id = (text: string) => {
  const n = parseId(text);
  if (n === null) throw notFound();
  return n;
};

/** /api/users */
export function userRoutes(ctx: Ctx) {
  return new Elysia({ name: "user-routes", prefix: "/api/users" })
    .use(authPlugin(ctx))
    .get("/", () => ctx.users.list(), { auth: SUPER, detail: { tags: ["users"], summary: "List users with their app grants" } })
    .post(
      "/",
      async ({ body, actor, set }) => {
        const u = await ctx.users.create(body, actor);
        return withStatus(set, 201, newUserJson(u));
      },
      {
        auth: SUPER,
        body: t.Object({ username: t.String(), password: t.String(), role: t.String() }),
        detail: { tags: ["users"], summary: "Create a user" },
      },
    )
    .get("/:id", ({ params }) => ctx.users.get(id(params.id)), { auth: SUPER, detail: { tags: ["users"], summary: "One user" } })
    .put(
      "/:id",
      async ({ params, body, actor }) => {
        const u = await ctx.users.update(id(params.id), body, actor);
        return userJson(u, ctx.userRepo.grants(u.id));
      },
      {
        auth: SUPER,
        body: t.Object({ role: t.Optional(t.String()), password: t.Optional(t.String()) }),
        detail: { tags: ["users"], summary: "Change a user's role or password (ends their sessions)" },
      },
    )
    .delete(
      "/:id",
      ({ params, actor, set }) => {
        ctx.users.delete(id(params.id), actor);
        return noContent(set);
      },
      { auth: SUPER, detail: { tags: ["users"], summary: "Delete a user and their API keys" } },
    )
    .post(
      "/:id/access",
      ({ params, body, actor, set }) => {
        ctx.users.grant(id(params.id), body.app_slug, actor);
        return noContent(set);
      },
      {
        auth: SUPER,
        body: t.Object({ app_slug: t.String() }),
        detail: { tags: ["users"], summary: "Grant a user access to an app" },
      },
    )
    .delete(
      "/:id/access/:slug",
      ({ params, actor, set }) => {
        ctx.users.revoke(id(params.id), params.slug, actor);
        return noContent(set);
      },
      { auth: SUPER, detail: { tags: ["users"], summary: "Revoke a user's access to an app" } },
    );
}
