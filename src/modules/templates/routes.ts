/**
 * Templates: the embedded catalog (list, one with its compose text) and a deploy from one, with its variables and
 * routing; the deploy is an ordinary API deploy of the rendered compose file and .env.
 */
import { existsSync } from "node:fs";
import { Elysia, t } from "elysia";
import { formatEnvFile } from "../../compose/envfile";
import type { Ctx } from "../../context";
import { withStatus } from "../../http/respond";
import { badRequest, conflict, notFound } from "../../lib/errors";
import { iso } from "../../lib/time";
import type { Accepted } from "../../shared/deploys";
import { SLUG_MAX } from "../../shared/slug";
import type { TemplateDetail, TemplateSummary } from "../../shared/templates";
import { checkSlug } from "../apps/slug";
import { authPlugin } from "../auth/macro";
import { catalog, detail, summary } from "./catalog";
import { chooseRouting, withRouteLabels } from "./routing";
import { resolveVariables } from "./variables";

export function templateRoutes(ctx: Ctx) {
  const find = async (id: string) => {
    const t = (await catalog()).get(id);
    if (!t) throw notFound();
    return t;
  };
  /** Whether an app (or a directory the reconciler would deploy) holds the slug. */
  const taken = (slug: string) => {
    const app = ctx.appRepo.bySlug(slug);
    return (!!app && !app.removedAt) || existsSync(ctx.appFiles.dir(slug));
  };
  const freeSlug = (slug: string): string | null => {
    for (let n = 2; n < 1000; n++) {
      const suffix = `-${n}`;
      const s = `${slug.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, "")}${suffix}`;
      if (!taken(s)) return s;
    }
    return null;
  };

  return new Elysia({ name: "template-routes", prefix: "/api/templates" })
    .use(authPlugin(ctx))
    .get("/", async (): Promise<TemplateSummary[]> => [...(await catalog()).values()].map(summary), {
      auth: { role: "any" },
      detail: { tags: ["templates"], summary: "The embedded template catalog" },
    })
    .get("/:id", async ({ params }): Promise<TemplateDetail> => detail(await find(params.id)), {
      auth: { role: "any" },
      detail: { tags: ["templates"], summary: "One template with its compose text and notes" },
    })
    .post(
      "/:id/deploy",
      async ({ params, body, actor, set }) => {
        const template = await find(params.id);
        const slug = checkSlug(body.slug, "slug");
        if (taken(slug)) {
          const free = freeSlug(slug);
          throw conflict(`app "${slug}" exists${free ? `; "${free}" is free` : ""}`);
        }
        const { env } = resolveVariables(template.variables, body.variables ?? {});
        const routing = chooseRouting(slug, body.routing, ctx.settings.publicHost());
        if (routing.host && !template.web)
          throw badRequest(`template ${template.id} serves no web page to route: deploy it with routing mode none`);
        const compose = template.web
          ? withRouteLabels(template.compose, template.web.service, template.web.port, routing)
          : template.compose;
        const { deployId } = await ctx.deployer.submit(slug, compose, formatEnvFile(env), {
          actor,
          source: actor.source,
        });
        // the app remembers what it was made from (the dashboard compares it with the catalog's version)
        const app = ctx.appRepo.bySlug(slug);
        if (app)
          ctx.appRepo.update(
            app.id,
            { templateJson: JSON.stringify({ id: template.id, version: template.version }) },
            iso(ctx.clock.now()),
          );
        return withStatus(set, 202, { slug, deploy_id: deployId } satisfies Accepted);
      },
      {
        auth: { app: "write", slugFrom: "body" },
        body: t.Object({
          slug: t.String(),
          variables: t.Optional(t.Record(t.String(), t.Unknown())),
          routing: t.Optional(
            t.Object(
              { mode: t.String(), domain: t.Optional(t.String()), tls: t.Optional(t.String()) },
              { additionalProperties: false },
            ),
          ),
        }),
        detail: {
          tags: ["templates"],
          summary: "Deploy a template: its variables (secrets left empty are generated) and routing (quick, domain, none)",
        },
      },
    );
}
