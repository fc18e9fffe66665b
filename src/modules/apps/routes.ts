/** Routes of apps that read: list and inspect with live status, the compose file on disk, the .env. */
import { Elysia } from "elysia";
import type { Ctx } from "../../context";
import { notFound } from "../../lib/errors";
import type { AppCompose } from "../../shared/apps";
import { authPlugin } from "../auth/macro";
import { mayMutateApps, seesAllApps } from "../auth/policy";
import { requireApp } from "./lookup";

const READ = { app: "read" } as const;

/** /api/apps (reads) */
export function appRoutes(ctx: Ctx) {
  const app = (slug: string) => requireApp(ctx.appRepo, slug);

  return new Elysia({ name: "app-routes", prefix: "/api/apps" })
    .use(authPlugin(ctx))
    .get(
      "/",
      ({ principal }) => {
        const all = seesAllApps(principal.user.role);
        const grants = all ? null : new Set(ctx.userRepo.grants(principal.user.id));
        return ctx.appViews.list(ctx.appRepo.list().filter((a) => !a.removedAt && (all || grants!.has(a.slug))));
      },
      { auth: { role: "any" }, detail: { tags: ["apps"], summary: "Apps the caller can see, with live status" } },
    )
    .get("/:slug", ({ params }) => ctx.appViews.view(app(params.slug)), {
      auth: READ,
      detail: { tags: ["apps"], summary: "One app" },
    })
    .get(
      "/:slug/compose",
      ({ params }) => {
        const a = app(params.slug);
        const f = ctx.appFiles.read(a.slug);
        if (!f) throw notFound();
        const body: AppCompose = { slug: a.slug, compose: f.compose, hash: f.hash, current_version_id: a.currentVersionId };
        return body;
      },
      { auth: READ, detail: { tags: ["apps"], summary: "The app's compose file as it is on disk" } },
    )
    .get("/:slug/env", ({ params, principal }) => ctx.appViews.env(app(params.slug).slug, mayMutateApps(principal.user.role)), {
      auth: READ,
      detail: { tags: ["apps"], summary: "The app's .env as {KEY: value}; values are null for viewers" },
    });
}
