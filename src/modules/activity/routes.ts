/** Routes of the activity log: lists with cursor and filters, one entry, the recent feed, purge, retention. */
import { Elysia } from "elysia";
import type { Ctx } from "../../context";
import { noContent, parseId } from "../../http/respond";
import { badRequest, notFound } from "../../lib/errors";
import type { Principal } from "../../shared/principal";
import { ActivityDetail, ActivityPage, AuditConfig } from "../../shared/schemas/activity";
import { checkSlug } from "../apps/slug";
import { authPlugin } from "../auth/macro";
import { seesAllApps } from "../auth/policy";
import { CATEGORIES, type Category, ListQuery, RecentQuery } from "./model";
import type { ListFilter, Visibility } from "./service";

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

/** What the caller may see. */
export function visibilityOf(ctx: Ctx, p: Principal): Visibility {
  return seesAllApps(p.user.role) ? { all: true } : { all: false, userId: p.user.id, slugs: ctx.userRepo.grants(p.user.id) };
}

/** Turn the query string into a filter; bad values are 400 with the reason. */
export function parseFilter(q: { categories?: string; app?: string; limit?: string; before?: string }): ListFilter {
  const f: { categories?: Category[]; app?: string; before?: number; limit: number } = { limit: DEFAULT_LIMIT };
  if (q.categories) {
    const list = q.categories
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    for (const c of list)
      if (!(CATEGORIES as readonly string[]).includes(c)) throw badRequest(`unknown category ${JSON.stringify(c)}`);
    if (list.length) f.categories = [...new Set(list)] as Category[];
  }
  if (q.app) f.app = checkSlug(q.app, "app");
  if (q.limit !== undefined && q.limit !== "") {
    if (!/^\d+$/.test(q.limit) || Number(q.limit) < 1) throw badRequest("limit must be a positive whole number");
    f.limit = Math.min(MAX_LIMIT, Number(q.limit));
  }
  if (q.before !== undefined && q.before !== "") {
    const b = parseId(q.before);
    if (b === null) throw badRequest("before must be an entry id");
    f.before = b;
  }
  return f;
}

/** /api/activity, /api/apps/:slug/activity, /api/system/audit-config */
export function activityRoutes(ctx: Ctx) {
  return new Elysia({ name: "activity-routes", prefix: "/api" })
    .use(authPlugin(ctx))
    .get("/activity", ({ principal, query }) => ctx.activity.list(parseFilter(query), visibilityOf(ctx, principal)), {
      auth: { role: "any" },
      query: ListQuery,
      response: ActivityPage,
      detail: { tags: ["activity"], summary: "Global activity, newest first, cursor-paginated" },
    })
    .get("/activity/recent", ({ principal, query }) => ctx.activity.recent(visibilityOf(ctx, principal), parseFilter(query)), {
      auth: { role: "any" },
      query: RecentQuery,
      response: ActivityPage,
      detail: { tags: ["activity"], summary: "The 8 most recent entries (same filters and cursor as the list)" },
    })
    .get(
      "/activity/:id",
      ({ principal, params }) => {
        const id = parseId(params.id);
        const entry = id === null ? null : ctx.activity.get(id, visibilityOf(ctx, principal));
        if (!entry) throw notFound();
        return entry;
      },
      {
        auth: { role: "any" },
        response: ActivityDetail,
        detail: { tags: ["activity"], summary: "One entry with before/after snapshots" },
      },
    )
    .delete(
      "/activity",
      ({ actor, set }) => {
        ctx.activity.purge(actor);
        return noContent(set);
      },
      { auth: { role: "super_admin" }, detail: { tags: ["activity"], summary: "Purge every entry (records audit_purged)" } },
    )
    .get(
      "/apps/:slug/activity",
      ({ principal, params, query }) => {
        const slug = checkSlug(params.slug, "slug");
        return ctx.activity.list({ ...parseFilter(query), app: slug }, visibilityOf(ctx, principal));
      },
      {
        auth: { app: "read" },
        query: ListQuery,
        response: ActivityPage,
        detail: { tags: ["activity"], summary: "Activity of one app" },
      },
    )
    .get("/system/audit-config", () => ({ retention_days: ctx.settings.auditRetentionDays() }), {
      auth: { role: "super_admin" },
      response: AuditConfig,
      detail: { tags: ["activity"], summary: "Audit retention" },
    })
    .put(
      "/system/audit-config",
      ({ body, actor }) => {
        const before = ctx.settings.auditRetentionDays();
        ctx.db.tx(() => {
          ctx.settings.setAuditRetentionDays(body.retention_days);
          if (before !== body.retention_days) {
            ctx.activity.record({
              actor,
              category: "system",
              action: "retention_changed",
              target: "audit",
              summary: `${actor.name} set audit retention to ${body.retention_days === 0 ? "forever" : `${body.retention_days} days`}`,
              before: { retention_days: before },
              after: { retention_days: body.retention_days },
            });
          }
        });
        return { retention_days: body.retention_days };
      },
      {
        auth: { role: "super_admin" },
        body: AuditConfig,
        response: AuditConfig,
        detail: { tags: ["activity"], summary: "Change audit retention (0 keeps forever)" },
      },
    );
}
