/**
 * Routes of alerts: rules (list, create, change, silence, remove) and the history of firing and resolved alerts.
 * Every signed-in user may call them; what a caller sees and may change is its app scope (see service.ts).
 */
import { Elysia } from "elysia";
import type { Ctx } from "../../context";
import { noContent, parseId, withStatus } from "../../http/respond";
import { badRequest, notFound } from "../../lib/errors";
import { checkSlug } from "../apps/slug";
import { authPlugin } from "../auth/macro";
import { HistoryQuery, RuleBody, RulePatch, SilenceBody } from "./model";

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

const id = (text: string) => {
  const n = parseId(text);
  if (n === null) throw notFound();
  return n;
};

/** The history query as a filter; bad values are 400 with the reason. */
function historyFilter(q: typeof HistoryQuery.static) {
  const f: { app?: string; rule?: number; state?: "firing" | "resolved"; before?: number; limit: number } = {
    limit: DEFAULT_LIMIT,
  };
  if (q.app) f.app = checkSlug(q.app, "app");
  if (q.rule) {
    const r = parseId(q.rule);
    if (r === null) throw badRequest("rule must be a rule id");
    f.rule = r;
  }
  if (q.state) {
    if (q.state !== "firing" && q.state !== "resolved") throw badRequest("state must be firing or resolved");
    f.state = q.state;
  }
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

/** /api/alerts */
export function alertRoutes(ctx: Ctx) {
  const any = { role: "any" } as const;
  return new Elysia({ name: "alert-routes", prefix: "/api/alerts" })
    .use(authPlugin(ctx))
    .get("/rules", ({ principal }) => ctx.alerts.list(principal), {
      auth: any,
      detail: { tags: ["alerts"], summary: "Alert rules in the caller's app scope, with what fires now" },
    })
    .post("/rules", ({ body, principal, actor, set }) => withStatus(set, 201, ctx.alerts.create(body, principal, actor)), {
      auth: any,
      body: RuleBody,
      detail: { tags: ["alerts"], summary: "Create a rule (of an app the caller may change, or global for admins)" },
    })
    .get("/rules/:id", ({ params, principal }) => ctx.alerts.get(id(params.id), principal), {
      auth: any,
      detail: { tags: ["alerts"], summary: "One rule" },
    })
    .put("/rules/:id", ({ params, body, principal, actor }) => ctx.alerts.update(id(params.id), body, principal, actor), {
      auth: any,
      body: RulePatch,
      detail: { tags: ["alerts"], summary: "Change a rule: the fields given replace the stored ones" },
    })
    .post(
      "/rules/:id/silence",
      ({ params, body, principal, actor }) => ctx.alerts.silence(id(params.id), body.until, principal, actor),
      {
        auth: any,
        body: SilenceBody,
        detail: { tags: ["alerts"], summary: "Hold a rule's notifications until a time (null lifts it)" },
      },
    )
    .delete(
      "/rules/:id",
      ({ params, principal, actor, set }) => {
        ctx.alerts.remove(id(params.id), principal, actor);
        return noContent(set);
      },
      { auth: any, detail: { tags: ["alerts"], summary: "Remove a rule (its history stays)" } },
    )
    .get("/history", ({ query, principal }) => ctx.alerts.history(historyFilter(query), principal), {
      auth: any,
      query: HistoryQuery,
      detail: { tags: ["alerts"], summary: "Firing and resolved alerts, newest first, cursor-paginated" },
    });
}
