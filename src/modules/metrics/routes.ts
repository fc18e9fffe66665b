/** Route of request statistics: rate, latency percentiles, status breakdown and top paths for a range. */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { parseDuration } from "../../lib/duration";
import { badRequest } from "../../lib/errors";
import { requireApp } from "../apps/lookup";
import { authPlugin } from "../auth/macro";

const MAX_RANGE_MS = 400 * 86_400_000;

/** /api/apps/:slug/request-stats */
export function metricsRoutes(ctx: Ctx) {
  return new Elysia({ name: "metrics-routes", prefix: "/api/apps" }).use(authPlugin(ctx)).get(
    "/:slug/request-stats",
    ({ params, query }) => {
      // a removed app has no stats to show, like a missing one
      const a = requireApp(ctx.appRepo, params.slug);
      const text = query.range || "1h";
      const ms = parseDuration(text);
      if (!ms || ms <= 0 || ms > MAX_RANGE_MS) throw badRequest("range must be a duration such as 1h, 24h or 7d (at most 400d)");
      // everything counted so far is stored first, so the answer includes the last request
      ctx.edge.flush(true);
      return { range: text, ...ctx.requestStats.query(a.slug, ms) };
    },
    {
      auth: { app: "read" },
      query: t.Object({ range: t.Optional(t.String({ description: "duration such as 1h, 24h, 7d (default 1h)" })) }),
      detail: { tags: ["apps"], summary: "Requests per second, p50/p95/p99 latency, status codes and top paths over a range" },
    },
  );
}
