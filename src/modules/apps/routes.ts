/** Routes of apps: deploy, list and inspect, lifecycle, scale, versions and rollback, compose, env. */
import { Elysia, t } from "elysia";
import { formatEnvFile, parseEnvFile } from "../../compose/envfile";
import type { Ctx } from "../../context";
import { parseId, withStatus } from "../../http/respond";
import { badRequest, conflict, notFound } from "../../lib/errors";
import { authPlugin } from "../auth/macro";
import { mayMutateApps, seesAllApps } from "../auth/policy";
import { checkSlug } from "../users/service";
import type { DeployRow } from "./repo";

const READ = { app: "read" } as const;
const WRITE = { app: "write" } as const;
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Turn a `{KEY: value}` body into .env text, refusing bad keys and non-string values. */
function envText(env: Record<string, unknown>): string {
  for (const [k, v] of Object.entries(env)) {
    if (!ENV_KEY.test(k)) throw badRequest(`env key ${JSON.stringify(k)} is not a valid variable name`);
    if (typeof v !== "string") throw badRequest(`env ${k} must be a string`);
  }
  return formatEnvFile(env as Record<string, string>);
}

/** The wire form of a deploy journal row. */
function deployJson(d: DeployRow) {
  return {
    id: d.id,
    action: d.action,
    status: d.status,
    error: d.error,
    version_id: d.versionId,
    source: d.source,
    started_at: d.startedAt,
    finished_at: d.finishedAt,
  };
}

/** /api/apps */
export function appRoutes(ctx: Ctx) {
  const app = (slug: string) => {
    const row = ctx.appRepo.bySlug(slug);
    if (!row || row.removedAt) throw notFound();
    return row;
  };
  const accepted = (set: { status?: number | string }, slug: string, deployId: number | null) =>
    withStatus(set, 202, { slug, deploy_id: deployId });

  return new Elysia({ name: "app-routes", prefix: "/api/apps" })
    .use(authPlugin(ctx))
    .post(
      "/deploy",
      ({ body, actor, set }) => {
        const slug = checkSlug(body.slug, "slug");
        // an omitted env keeps the app's current .env, so a compose update never wipes its secrets
        const env = body.env === undefined || body.env === null ? (ctx.appFiles.read(slug)?.env ?? "") : envText(body.env);
        const { deployId } = ctx.deployer.submit(slug, body.compose, env, {
          actor,
          source: actor.source,
          autoRollback: body.auto_rollback,
        });
        return accepted(set, slug, deployId);
      },
      {
        auth: { app: "write", slugFrom: "body" },
        body: t.Object({
          slug: t.String(),
          compose: t.String({ minLength: 1 }),
          env: t.Optional(t.Union([t.Record(t.String(), t.Unknown()), t.Null()])),
          auto_rollback: t.Optional(t.Boolean()),
        }),
        detail: {
          tags: ["apps"],
          summary: "Deploy compose content (validated, written to the apps directory, deployed in the background)",
        },
      },
    )
    .get(
      "/",
      ({ principal }) => {
        const all = seesAllApps(principal.user.role);
        const grants = all ? null : new Set(ctx.userRepo.grants(principal.user.id));
        return ctx.appRepo
          .list()
          .filter((a) => !a.removedAt && (all || grants!.has(a.slug)))
          .map((a) => ctx.appViews.view(a));
      },
      { auth: { role: "any" }, detail: { tags: ["apps"], summary: "Apps the caller can see, with live status" } },
    )
    .get("/:slug", ({ params }) => ctx.appViews.view(app(params.slug)), {
      auth: READ,
      detail: { tags: ["apps"], summary: "One app" },
    })
    .delete(
      "/:slug",
      ({ params, query, actor, set }) => {
        app(params.slug);
        const { deployId } = ctx.deployer.remove(params.slug, { volumes: query.volumes === "true" }, actor);
        return accepted(set, params.slug, deployId);
      },
      {
        auth: WRITE,
        query: t.Object({ volumes: t.Optional(t.String({ description: "true also removes the app's volumes" })) }),
        detail: { tags: ["apps"], summary: "Remove an app: containers (and volumes with ?volumes=true), files and versions" },
      },
    )
    .post(
      "/:slug/start",
      ({ params, actor, set }) => accepted(set, params.slug, ctx.deployer.start(params.slug, actor).deployId),
      {
        auth: WRITE,
        detail: { tags: ["apps"], summary: "Start a stopped app" },
      },
    )
    .post("/:slug/stop", ({ params, actor, set }) => accepted(set, params.slug, ctx.deployer.stop(params.slug, actor).deployId), {
      auth: WRITE,
      detail: { tags: ["apps"], summary: "Stop an app (it stays stopped until started)" },
    })
    .post(
      "/:slug/restart",
      ({ params, actor, set }) => accepted(set, params.slug, ctx.deployer.restart(params.slug, actor).deployId),
      {
        auth: WRITE,
        detail: { tags: ["apps"], summary: "Restart an app's containers" },
      },
    )
    .post("/:slug/pull", ({ params, actor, set }) => accepted(set, params.slug, ctx.deployer.pull(params.slug, actor).deployId), {
      auth: WRITE,
      detail: { tags: ["apps"], summary: "Pull every image again and redeploy" },
    })
    .post(
      "/:slug/cancel",
      ({ params, actor, set }) => {
        if (!ctx.deployer.cancel(params.slug, actor)) throw conflict(`nothing is running for ${params.slug}`);
        return withStatus(set, 202, { slug: params.slug, cancelled: true });
      },
      { auth: WRITE, detail: { tags: ["apps"], summary: "Cancel the running deploy or action" } },
    )
    .post(
      "/:slug/scale",
      ({ params, body, actor, set }) =>
        accepted(set, params.slug, ctx.deployer.scale(params.slug, body.services, actor).deployId),
      {
        auth: WRITE,
        body: t.Object({ services: t.Record(t.String(), t.Unknown()) }),
        detail: { tags: ["apps"], summary: "Set replicas per service (refused with a reason for services that cannot scale)" },
      },
    )
    .post(
      "/:slug/rollback",
      ({ params, body, actor, set }) => {
        const id = typeof body.version_id === "number" ? body.version_id : Number.NaN;
        if (!Number.isInteger(id) || id < 1) throw badRequest("version_id must be a version id");
        return accepted(set, params.slug, ctx.deployer.rollback(params.slug, id, actor).deployId);
      },
      {
        auth: WRITE,
        body: t.Object({ version_id: t.Unknown() }),
        detail: { tags: ["apps"], summary: "Make a kept version the desired state again and deploy it" },
      },
    )
    .get("/:slug/deploys", ({ params }) => ctx.appRepo.recentDeploys(app(params.slug).id, 50).map(deployJson), {
      auth: READ,
      detail: { tags: ["apps"], summary: "The app's last 50 deploys and actions, newest first" },
    })
    .get(
      "/:slug/deploys/:id",
      ({ params }) => {
        const a = app(params.slug);
        const dep = ctx.appRepo.deploy(parseId(params.id) ?? 0);
        if (!dep || dep.appId !== a.id) throw notFound();
        return deployJson(dep);
      },
      { auth: READ, detail: { tags: ["apps"], summary: "One deploy or action: its status and error" } },
    )
    .get(
      "/:slug/versions",
      ({ params }) => {
        const a = app(params.slug);
        return ctx.appRepo.versions(a.id).map((v) => ({
          id: v.id,
          version: v.version,
          hash: v.hash,
          source: v.source,
          created_by: v.createdBy,
          status: v.status,
          current: v.id === a.currentVersionId,
          created_at: v.createdAt,
        }));
      },
      { auth: READ, detail: { tags: ["apps"], summary: "Kept compose versions, newest first" } },
    )
    .get(
      "/:slug/versions/:id",
      ({ params, principal }) => {
        const a = app(params.slug);
        const v = ctx.appRepo.version(parseId(params.id) ?? 0);
        if (!v || v.appId !== a.id) throw notFound();
        const env = parseEnvFile(ctx.secrets.open(v.envSealed));
        const withValues = mayMutateApps(principal.user.role);
        return {
          id: v.id,
          version: v.version,
          hash: v.hash,
          source: v.source,
          created_by: v.createdBy,
          status: v.status,
          current: v.id === a.currentVersionId,
          created_at: v.createdAt,
          compose: v.compose,
          env: Object.fromEntries(Object.entries(env).map(([k, val]) => [k, withValues ? val : null])),
        };
      },
      {
        auth: READ,
        detail: {
          tags: ["apps"],
          summary: "One version with its compose file (env values only for those who may change the app)",
        },
      },
    )
    .get(
      "/:slug/compose",
      ({ params }) => {
        const a = app(params.slug);
        const f = ctx.appFiles.read(a.slug);
        if (!f) throw notFound();
        return { slug: a.slug, compose: f.compose, hash: f.hash, current_version_id: a.currentVersionId };
      },
      { auth: READ, detail: { tags: ["apps"], summary: "The app's compose file as it is on disk" } },
    )
    .get("/:slug/env", ({ params, principal }) => ctx.appViews.env(app(params.slug).slug, mayMutateApps(principal.user.role)), {
      auth: READ,
      detail: { tags: ["apps"], summary: "The app's .env as {KEY: value}; values are null for viewers" },
    })
    .put(
      "/:slug/env",
      ({ params, body, actor }) => {
        const a = app(params.slug);
        const f = ctx.appFiles.read(a.slug);
        if (!f) throw notFound();
        const text = envText(body);
        ctx.deployer.submit(a.slug, f.compose, text, { actor, source: actor.source });
        return parseEnvFile(text);
      },
      {
        auth: WRITE,
        body: t.Record(t.String(), t.Unknown()),
        detail: { tags: ["apps"], summary: "Replace the app's .env and redeploy" },
      },
    );
}
