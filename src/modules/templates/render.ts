/**
 * What a deploy from a template would deploy, shared by the render (the wizard's review) and the deploy itself: the
 * slug (409 naming a free one when taken), the variables as a .env text, the routing as labels, the batteries asked
 * for, then the texts through the deploy's own checks. A deploy's reviewed `compose` or `env` replaces the rendered
 * one and is checked the same way, so a render answers 400 or 409 exactly when the deploy of that body would.
 */
import { existsSync } from "node:fs";
import { formatEnvFile } from "../../compose/envfile";
import type { Ctx } from "../../context";
import { badRequest, conflict } from "../../lib/errors";
import { SLUG_MAX } from "../../shared/slug";
import type { TemplateBatteryPlan } from "../../shared/templates";
import { checkSlug } from "../apps/slug";
import { checkBatteryServices, planBatteries } from "./batteries";
import type { Template } from "./catalog";
import type { DeployInput } from "./model";
import { chooseRouting, withRouteLabels } from "./routing";
import { resolveVariables } from "./variables";

/** The texts a deploy of a body uses, and the batteries it makes once accepted. */
export interface RenderedDeploy {
  slug: string;
  compose: string;
  env: string;
  plan: TemplateBatteryPlan | null;
}

/** Build the renderer over the apps it must not collide with and the deploy checks. */
export function createTemplateRenderer(d: Pick<Ctx, "appRepo" | "appFiles" | "settings" | "deployer">) {
  /** Whether an app (or a directory the reconciler would deploy) holds the slug. */
  const taken = (slug: string) => {
    const app = d.appRepo.bySlug(slug);
    return (!!app && !app.removedAt) || existsSync(d.appFiles.dir(slug));
  };
  const freeSlug = (slug: string): string | null => {
    for (let n = 2; n < 1000; n++) {
      const suffix = `-${n}`;
      const s = `${slug.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, "")}${suffix}`;
      if (!taken(s)) return s;
    }
    return null;
  };

  return {
    /** The compose and .env texts of a deploy of `body`, checked as the deploy checks them; writes nothing. */
    render(template: Template, body: DeployInput): RenderedDeploy {
      const slug = checkSlug(body.slug, "slug");
      if (taken(slug)) {
        const free = freeSlug(slug);
        throw conflict(`app "${slug}" exists${free ? `; "${free}" is free` : ""}`);
      }
      const { env } = resolveVariables(template.variables, body.variables ?? {});
      const routing = chooseRouting(slug, body.routing, d.settings.publicHost());
      if (routing.host && !template.web)
        throw badRequest(`template ${template.id} serves no web page to route: deploy it with routing mode none`);
      const plan = planBatteries(template, slug, body.batteries);
      const compose =
        body.compose ??
        (template.web ? withRouteLabels(template.compose, template.web.service, template.web.port, routing) : template.compose);
      const envText = body.env ?? formatEnvFile(env);
      const prepared = d.deployer.validate(slug, compose, envText);
      checkBatteryServices(
        plan,
        prepared.project.services.map((s) => s.name),
      );
      return { slug, compose, env: envText, plan };
    },
  };
}
