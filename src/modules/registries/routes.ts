/** Routes of registry credentials: everyone signed in may list them (names and hosts), admins change them. */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { noContent, parseId, withStatus } from "../../http/respond";
import { notFound } from "../../lib/errors";
import { authPlugin } from "../auth/macro";

const Body = t.Object({
  name: t.String(),
  url: t.String(),
  username: t.String(),
  password: t.Optional(t.String()),
});

const id = (text: string) => {
  const n = parseId(text);
  if (n === null) throw notFound();
  return n;
};

/** /api/registries */
export function registryRoutes(ctx: Ctx) {
  return new Elysia({ name: "registry-routes", prefix: "/api/registries" })
    .use(authPlugin(ctx))
    .get("/", () => ctx.registries.list(), {
      auth: { role: "any" },
      detail: { tags: ["registries"], summary: "Stored registries (never their passwords)" },
    })
    .post("/", ({ body, actor, set }) => withStatus(set, 201, ctx.registries.create(body, actor)), {
      auth: { role: "admin" },
      body: Body,
      detail: { tags: ["registries"], summary: "Store registry credentials (sealed at rest)" },
    })
    .put("/:id", ({ params, body, actor }) => ctx.registries.update(id(params.id), body, actor), {
      auth: { role: "admin" },
      body: Body,
      detail: { tags: ["registries"], summary: "Change a registry; an omitted password keeps the stored one" },
    })
    .delete(
      "/:id",
      ({ params, actor, set }) => {
        ctx.registries.remove(id(params.id), actor);
        return noContent(set);
      },
      { auth: { role: "admin" }, detail: { tags: ["registries"], summary: "Remove a registry" } },
    );
}
