/**
 * Routes that change what runs: deploy, remove, lifecycle actions, scale, cancel, rollback, the .env, the endpoints;
 * and the deploy journal (deploys and kept versions). Every change is accepted with 202 and runs as an operation of the app.
 */
import { Elysia, t } from "elysia";
import { formatEnvFile, parseEnvFile } from "../../compose/envfile";
import type { Ctx } from "../../context";
import { parseId, withStatus } from "../../http/respond";
import { badRequest, notFound } from "../../lib/errors";
import type { Accepted, AppVersion, AppVersionDetail, CancelAccepted, DeployRecord } from "../../shared/deploys";
import { requireApp } from "../apps/lookup";
import { checkSlug } from "../apps/slug";
import { authPlugin } from "../auth/macro";
import { mayMutateApps } from "../auth/policy";
import { EndpointsBody, editEndpoints } from "./endpoint-edit";
import type { DeployRow, VersionRow } from "./repo";

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
function deployJson(d: DeployRow): DeployRecord {
  return {
    id: d.id,
    action: d.action,
    status: d.status,
    error: d.error,
    version_id: d.versionId,
    source: d.source,
    started_at: d.startedAt,
    finished_at: d.finishedAt,
    strategies: d.strategiesJson ? JSON.parse(d.strategiesJson) : null,
  };
}

/** The wire form of a kept version (without its content). */
function versionJson(v: VersionRow, currentId: number | null): AppVersion {
  return {
    id: v.id,
    version: v.version,
    hash: v.hash,
    source: v.source,
    created_by: v.createdBy,
    status: v.status as AppVersion["status"],
    current: v.id === currentId,
    created_at: v.createdAt,
  };
}

/** /api/apps (changes and the journal) */
export function deployRoutes(ctx: Ctx) {
  const app = (slug: string) => requireApp(ctx.appRepo, slug);
  const accepted = (set: { status?: number | string }, slug: string, deployId: number | null) =>
    withStatus(set, 202, { slug, deploy_id: deployId } satisfies Accepted);
  const action = (summary: string) => ({ auth: WRITE, detail: { tags: ["apps"], summary } });

  return new Elysia({ name: "deploy-routes", prefix: "/api/apps" })
    .use(authPlugin(ctx))
    .post(
      "/deploy",
      async ({ body, actor, set }) => {
        const slug = checkSlug(body.slug, "slug");
        // an omitted env keeps the app's current .env, so a compose update never wipes its secrets
        const env = body.env === undefined || body.env === null ? (ctx.appFiles.read(slug)?.env ?? "") : envText(body.env);
        const { deployId } = await ctx.deployer.submit(slug, body.compose, env, {
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
    .delete(
      "/:slug",
      async ({ params, query, actor, set }) => {
        const { deployId } = await ctx.deployer.remove(params.slug, { volumes: query.volumes === "true" }, actor);
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
      async ({ params, actor, set }) => accepted(set, params.slug, (await ctx.deployer.start(params.slug, actor)).deployId),
      action("Start a stopped app"),
    )
    .post(
      "/:slug/stop",
      async ({ params, actor, set }) => accepted(set, params.slug, (await ctx.deployer.stop(params.slug, actor)).deployId),
      action("Stop an app (it stays stopped until started)"),
    )
    .post(
      "/:slug/restart",
      async ({ params, actor, set }) => accepted(set, params.slug, (await ctx.deployer.restart(params.slug, actor)).deployId),
      action("Restart an app's containers"),
    )
    .post(
      "/:slug/pull",
      async ({ params, actor, set }) => accepted(set, params.slug, (await ctx.deployer.pull(params.slug, actor)).deployId),
      action("Pull every image again and redeploy"),
    )
    .post(
      "/:slug/cancel",
      ({ params, actor, set }) => {
        const c = ctx.deployer.cancel(params.slug, actor);
        const body: CancelAccepted = { slug: params.slug, cancelled: c.running !== null || c.waiting !== null };
        return withStatus(set, 202, body);
      },
      action("Cancel the running operation and the one waiting (202 also when nothing runs)"),
    )
    .post(
      "/:slug/scale",
      async ({ params, body, actor, set }) =>
        accepted(set, params.slug, (await ctx.deployer.scale(params.slug, body.services, actor)).deployId),
      {
        auth: WRITE,
        body: t.Object({ services: t.Record(t.String(), t.Unknown()) }),
        detail: { tags: ["apps"], summary: "Set replicas per service (refused with a reason for services that cannot scale)" },
      },
    )
    .post(
      "/:slug/rollback",
      async ({ params, body, actor, set }) => {
        const id = typeof body.version_id === "number" ? body.version_id : Number.NaN;
        if (!Number.isInteger(id) || id < 1) throw badRequest("version_id must be a version id");
        return accepted(set, params.slug, (await ctx.deployer.rollback(params.slug, id, actor)).deployId);
      },
      {
        auth: WRITE,
        body: t.Object({ version_id: t.Unknown() }),
        detail: { tags: ["apps"], summary: "Make a kept version the desired state again and deploy it" },
      },
    )
    .put(
      "/:slug/env",
      async ({ params, body, actor }) => {
        const a = app(params.slug);
        const f = ctx.appFiles.read(a.slug);
        if (!f) throw notFound();
        const text = envText(body);
        await ctx.deployer.submit(a.slug, f.compose, text, { actor, source: actor.source });
        return parseEnvFile(text);
      },
      {
        auth: WRITE,
        body: t.Record(t.String(), t.Unknown()),
        detail: { tags: ["apps"], summary: "Replace the app's .env and redeploy" },
      },
    )
    .put(
      "/:slug/endpoints",
      async ({ params, body, actor, set }) => {
        const a = app(params.slug);
        const f = ctx.appFiles.read(a.slug);
        if (!f) throw notFound();
        const compose = editEndpoints(f, body, (text) => ctx.deployer.validate(a.slug, text, f.env));
        const { deployId } = await ctx.deployer.submit(a.slug, compose, f.env, { actor, source: actor.source });
        return accepted(set, a.slug, deployId);
      },
      {
        auth: WRITE,
        body: EndpointsBody,
        detail: {
          tags: ["apps"],
          summary: "Replace the app's endpoints: the routing labels rewritten in its compose file, kept as a version, deployed",
        },
      },
    )
    .get("/:slug/deploys", ({ params }) => ctx.deployRepo.recentDeploys(app(params.slug).id, 50).map(deployJson), {
      auth: READ,
      detail: { tags: ["apps"], summary: "The app's last 50 deploys and actions, newest first" },
    })
    .get(
      "/:slug/deploys/:id",
      ({ params }) => {
        const a = app(params.slug);
        const dep = ctx.deployRepo.deploy(parseId(params.id) ?? 0);
        if (!dep || dep.appId !== a.id) throw notFound();
        return deployJson(dep);
      },
      { auth: READ, detail: { tags: ["apps"], summary: "One deploy or action: its status and error" } },
    )
    .get(
      "/:slug/versions",
      ({ params }) => {
        const a = app(params.slug);
        return ctx.deployRepo.versions(a.id).map((v) => versionJson(v, a.currentVersionId));
      },
      { auth: READ, detail: { tags: ["apps"], summary: "Kept compose versions, newest first" } },
    )
    .get(
      "/:slug/versions/:id",
      ({ params, principal }) => {
        const a = app(params.slug);
        const v = ctx.deployRepo.version(parseId(params.id) ?? 0);
        if (!v || v.appId !== a.id) throw notFound();
        const env = parseEnvFile(ctx.secrets.open(v.envSealed));
        const withValues = mayMutateApps(principal.user.role);
        const detail: AppVersionDetail = {
          ...versionJson(v, a.currentVersionId),
          compose: v.compose,
          env: Object.fromEntries(Object.entries(env).map(([k, val]) => [k, withValues ? val : null])),
        };
        return detail;
      },
      {
        auth: READ,
        detail: {
          tags: ["apps"],
          summary: "One version with its compose file (env values only for those who may change the app)",
        },
      },
    );
}
