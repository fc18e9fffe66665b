/**
 * Templates: the embedded catalog (list, one with its compose text), the render of a deploy (the texts it would
 * deploy, for review) and a deploy from one, with its variables, routing and batteries; the deploy is an ordinary
 * API deploy of the rendered (or reviewed) compose file and .env.
 */
import { Elysia } from "elysia";
import type { Ctx } from "../../context";
import { withStatus } from "../../http/respond";
import { notFound } from "../../lib/errors";
import { iso } from "../../lib/time";
import type { TemplateDeployAccepted, TemplateDetail, TemplateRender, TemplateSummary } from "../../shared/templates";
import { authPlugin } from "../auth/macro";
import { makeBatteries } from "./batteries";
import { catalog, detail, summary } from "./catalog";
import { DeployBody, RenderBody } from "./model";
import { createTemplateRenderer } from "./render";

export function templateRoutes(ctx: Ctx) {
  const find = async (id: string) => {
    const t = (await catalog()).get(id);
    if (!t) throw notFound();
    return t;
  };
  const renderer = createTemplateRenderer(ctx);
  const log = ctx.logs.logger("templates");
  // the render and the deploy answer to the same callers: who may deploy the slug
  const auth = { app: "write", slugFrom: "body" } as const;

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
      "/:id/render",
      async ({ params, body }): Promise<TemplateRender> => {
        const r = renderer.render(await find(params.id), body);
        return { compose: r.compose, env: r.env, ...(r.plan ? { batteries: r.plan } : {}) };
      },
      {
        auth,
        body: RenderBody,
        detail: {
          tags: ["templates"],
          summary: "The compose and .env texts a deploy of this body would use (secrets left empty generated); writes nothing",
        },
      },
    )
    .post(
      "/:id/deploy",
      async ({ params, body, principal, actor, set }) => {
        const template = await find(params.id);
        const r = renderer.render(template, body);
        const { deployId } = await ctx.deployer.submit(r.slug, r.compose, r.env, { actor, source: actor.source });
        // the app remembers what it was made from (the dashboard compares it with the catalog's version)
        const app = ctx.appRepo.bySlug(r.slug);
        if (app)
          ctx.appRepo.update(
            app.id,
            { templateJson: JSON.stringify({ id: template.id, version: template.version }) },
            iso(ctx.clock.now()),
          );
        const out: TemplateDeployAccepted = { slug: r.slug, deploy_id: deployId };
        if (r.plan)
          out.batteries = makeBatteries({ backups: ctx.backups, alerts: ctx.alerts, log }, r.slug, r.plan, principal, actor);
        return withStatus(set, 202, out);
      },
      {
        auth,
        body: DeployBody,
        detail: {
          tags: ["templates"],
          summary:
            "Deploy a template: its variables (secrets left empty are generated), routing (quick, domain, none), batteries " +
            "(backup, alert), or the reviewed compose and env texts",
        },
      },
    );
}
