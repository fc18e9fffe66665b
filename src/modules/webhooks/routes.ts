/**
 * Routes of alert webhook destinations, following the registries' rule for a global resource with a write-only
 * secret: everyone signed in may read them (names and kinds for alert rules, the delivery log; the URL cut to its
 * origin, since Slack and Discord URLs carry a token), admins change and test them.
 */
import { Elysia } from "elysia";
import type { Ctx } from "../../context";
import { noContent, parseId, withStatus } from "../../http/respond";
import { badRequest, notFound } from "../../lib/errors";
import { authPlugin } from "../auth/macro";
import { seesAllApps } from "../auth/policy";
import { DeliveriesQuery, TestBody, WebhookBody } from "./model";

const ADMIN = { role: "admin" } as const;

const id = (text: string) => {
  const n = parseId(text);
  if (n === null) throw notFound();
  return n;
};

/** `limit` of the delivery log: default 50, at most 200. */
function limitOf(text: string | undefined): number {
  if (text === undefined) return 50;
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1) throw badRequest("limit must be a positive integer");
  return Math.min(Number(text), 200);
}

/** /api/webhooks */
export function webhookRoutes(ctx: Ctx) {
  return new Elysia({ name: "webhook-routes", prefix: "/api/webhooks" })
    .use(authPlugin(ctx))
    .get("/", ({ principal }) => ctx.webhooks.list(seesAllApps(principal.user.role)), {
      auth: { role: "any" },
      detail: { tags: ["webhooks"], summary: "Alert webhook destinations (secrets masked; full URLs for admins)" },
    })
    .post("/", ({ body, actor, set }) => withStatus(set, 201, ctx.webhooks.create(body, actor)), {
      auth: ADMIN,
      body: WebhookBody,
      detail: { tags: ["webhooks"], summary: "Add a destination (the secret is sealed at rest and never returned)" },
    })
    .post("/test", ({ body }) => ctx.webhooks.test(body), {
      auth: ADMIN,
      body: TestBody,
      detail: { tags: ["webhooks"], summary: "Send a test notification once and report {ok, status, error}" },
    })
    .put("/:id", ({ params, body, actor }) => ctx.webhooks.update(id(params.id), body, actor), {
      auth: ADMIN,
      body: WebhookBody,
      detail: { tags: ["webhooks"], summary: 'Change a destination; secret omitted or ******** keeps it, "" clears it' },
    })
    .delete(
      "/:id",
      ({ params, actor, set }) => {
        ctx.webhooks.remove(id(params.id), actor);
        return noContent(set);
      },
      { auth: ADMIN, detail: { tags: ["webhooks"], summary: "Remove a destination and its delivery log" } },
    )
    .get(
      "/:id/deliveries",
      ({ params, query }) => {
        const before = query.before === undefined ? undefined : (parseId(query.before) ?? undefined);
        return ctx.webhooks.deliveries(id(params.id), limitOf(query.limit), before);
      },
      {
        auth: { role: "any" },
        query: DeliveriesQuery,
        detail: { tags: ["webhooks"], summary: "The delivery log of a destination, newest first" },
      },
    );
}
