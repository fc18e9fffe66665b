/**
 * Routes of backups. Under an app: who may read the app sees its configs, runs and restores; who may change it
 * (admins, manage with a grant) changes configs, runs, downloads and restores (an archive holds the app's data and
 * secrets, so a viewer does not download it). Routes by id find the app from the record and apply the same rule.
 */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { bodyLimit } from "../../http/body";
import { noContent, parseId, withStatus } from "../../http/respond";
import { badRequest, notFound } from "../../lib/errors";
import type { Principal } from "../../shared/principal";
import { SECRET_MASK } from "../../shared/webhooks";
import { authPlugin } from "../auth/macro";
import { authorize } from "../auth/policy";
import { destination } from "./configs";
import { ConfigBody, checkCadence, checkTarget, ListQuery, TargetBody, type TargetInput } from "./model";
import { spoolMultipart } from "./upload";

const id = (text: string) => {
  const n = parseId(text);
  if (n === null) throw notFound();
  return n;
};

/** `limit`: default 50, at most 500. */
function limitOf(text: string | undefined): number {
  if (text === undefined || text === "") return 50;
  if (!/^\d{1,6}$/.test(text) || Number(text) < 1) throw badRequest("limit must be a positive whole number");
  return Math.min(Number(text), 500);
}

/** /api/apps/:slug/backups/* and /api/backups/* */
export function backupRoutes(ctx: Ctx) {
  const read = { app: "read" } as const;
  const write = { app: "write" } as const;
  /**
   * The scope rule for a record found by id: an app's follows the app (404 for an app the caller cannot see, 403 for
   * read-only); one without an app is Sundeck's own state (password hashes, sealed secrets): super-admins only.
   */
  const scope = (p: Principal, slug: string | null, need: "read" | "write") =>
    slug === null
      ? authorize(p, { role: "super_admin" }, { hasGrant: ctx.userRepo.hasGrant })
      : authorize(p, { app: need }, { slug, hasGrant: ctx.userRepo.hasGrant });
  /** Admins choose S3 endpoints; a manage user uses the ones an admin set for the app. */
  const writer = (p: Principal) => ({ admin: p.user.role === "super_admin" || p.user.role === "admin" });
  /** A config body as the API takes it: at most one run a minute. */
  const paced = <T extends { schedule?: string | null }>(body: T): T => {
    const bad = checkCadence(body.schedule);
    if (bad) throw badRequest(bad.error);
    return body;
  };
  const app = (slug: string) => {
    if (!ctx.appRepo.bySlug(slug)) throw notFound();
    return slug;
  };
  const tags = ["backups"];
  /**
   * A test that takes a config's stored secret: the caller must be allowed to change that config (a state config's
   * is super-admin only), and the secret goes only where the config sends it.
   */
  const storedSecretFor = (p: Principal, target: TargetInput, configId: number) => {
    const c = ctx.backups.configs.row(configId);
    scope(p, c.appSlug, "write");
    const sent = target.kind === "s3" ? target.secret_key : undefined;
    if (target.kind !== "s3" || (sent !== undefined && sent !== "" && sent !== SECRET_MASK)) return;
    const { kind, ...spec } = checkTarget(target, "-");
    if (destination(kind, JSON.stringify(spec)) !== destination(c.targetKind, c.targetJson))
      throw badRequest("target.secret_key must be sent: the stored one goes only to its config's s3 endpoint");
  };

  return new Elysia({ name: "backup-routes" })
    .use(authPlugin(ctx))
    .get("/api/apps/:slug/backups/configs", ({ params }) => ctx.backups.configs.list(app(params.slug)), {
      auth: read,
      detail: { tags, summary: "An app's backup configs (S3 secret keys masked)" },
    })
    .post(
      "/api/apps/:slug/backups/configs",
      ({ params, body, principal, actor, set }) =>
        withStatus(set, 201, ctx.backups.configs.create(app(params.slug), paced(body), actor, writer(principal))),
      {
        auth: write,
        body: ConfigBody,
        detail: { tags, summary: "Add a backup config (the S3 secret is sealed, never returned)" },
      },
    )
    .put(
      "/api/backups/configs/:id",
      ({ params, body, principal, actor }) => {
        const c = ctx.backups.configs.row(id(params.id));
        scope(principal, c.appSlug, "write");
        return ctx.backups.configs.update(c.id, paced(body), actor, writer(principal));
      },
      {
        auth: { role: "any" },
        body: ConfigBody,
        detail: { tags, summary: "Change a config: the fields given replace; secret_key omitted or ******** keeps it" },
      },
    )
    .delete(
      "/api/backups/configs/:id",
      ({ params, principal, actor, set }) => {
        const c = ctx.backups.configs.row(id(params.id));
        scope(principal, c.appSlug, "write");
        ctx.backups.configs.remove(c.id, actor);
        return noContent(set);
      },
      { auth: { role: "any" }, detail: { tags, summary: "Remove a config (its runs and archives stay)" } },
    )
    .get("/api/apps/:slug/backups/detected", ({ params }) => ctx.backups.detected(app(params.slug)), {
      auth: read,
      detail: { tags, summary: "Backup strategies detected for the app's services" },
    })
    .post(
      "/api/backups/configs/:id/run",
      ({ params, principal, actor, set }) => {
        const c = ctx.backups.configs.row(id(params.id));
        scope(principal, c.appSlug, "write");
        return withStatus(set, 202, ctx.backups.runNow(c.id, actor));
      },
      { auth: { role: "any" }, detail: { tags, summary: "Run a backup now (409 while one of the config runs)" } },
    )
    .get("/api/apps/:slug/backups/runs", ({ params, query }) => ctx.backups.runs(app(params.slug), limitOf(query.limit)), {
      auth: read,
      query: ListQuery,
      detail: { tags, summary: "An app's backup runs, newest first, with live progress" },
    })
    .get(
      "/api/backups/runs/:id/download",
      ({ params, principal }) => {
        const r = ctx.backups.runRow(id(params.id));
        scope(principal, r.appSlug, "write");
        return ctx.backups.download(r.id);
      },
      { auth: { role: "any" }, detail: { tags, summary: "The stored archive (S3: a redirect to a presigned URL)" } },
    )
    .post(
      "/api/backups/runs/:id/restore",
      async ({ params, principal, actor, set }) => {
        const r = ctx.backups.runRow(id(params.id));
        scope(principal, r.appSlug, "write");
        return withStatus(set, 202, await ctx.backups.restoreRun(r.id, actor));
      },
      { auth: { role: "any" }, detail: { tags, summary: "Restore a stored run into its service (429 past 4 at once)" } },
    )
    .post(
      "/api/apps/:slug/backups/upload-restore",
      async ({ params, request, actor, set }) => {
        const slug = app(params.slug);
        const type = request.headers.get("content-type") ?? "";
        const r = await ctx.backups.uploadRestore(
          slug,
          (dest) => spoolMultipart(request.body, type, dest, bodyLimit(new URL(request.url).pathname)),
          actor,
        );
        return withStatus(set, 202, r);
      },
      {
        auth: write,
        // parseBody leaves this body unread: the route streams it to a temp file (multipart, 32 MiB)
        detail: { tags, summary: "Restore an uploaded archive (multipart: file, strategy, container?; 32 MiB)" },
      },
    )
    .post(
      "/api/backups/targets/test",
      ({ body, principal }) => {
        if (body.config_id !== undefined) storedSecretFor(principal, body.target, body.config_id);
        return ctx.backups.testTarget(body.target, body.config_id);
      },
      {
        // a probe of any address: admins only, as the answer tells what listens where
        auth: { role: "admin" },
        body: t.Object({
          target: TargetBody,
          config_id: t.Optional(t.Integer({ minimum: 1, description: "take a left-out S3 secret from this config" })),
        }),
        detail: { tags, summary: "Check a backup target: write, read back and delete a probe; {ok, error}" },
      },
    )
    .get(
      "/api/apps/:slug/backups/restores",
      ({ params, query }) => ctx.backups.restores(app(params.slug), limitOf(query.limit)),
      { auth: read, query: ListQuery, detail: { tags, summary: "An app's restores, newest first" } },
    );
}
