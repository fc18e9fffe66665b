/**
 * Routes of request statistics and metrics: per app request stats and container metrics (app read access), host
 * metrics (any signed-in user: the host is not an app's; /api/system/info is open to every role the same way).
 * A range is a duration or 1y (default 1h, at most 400d); the tier answering it follows tierFor.
 */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { parseDuration } from "../../lib/duration";
import { badRequest } from "../../lib/errors";
import type { AppMetrics, SystemMetrics } from "../../shared/metrics";
import { requireApp } from "../apps/lookup";
import { authPlugin } from "../auth/macro";

const MAX_RANGE_MS = 400 * 86_400_000;

const YEAR_MS = 365 * 86_400_000;

/** The range query's text and milliseconds, or a 400. `1y` (365 days) is the dashboard's longest range button. */
function parseRange(text: string | undefined): { text: string; ms: number } {
  const s = text || "1h";
  const ms = s === "1y" ? YEAR_MS : parseDuration(s);
  if (!ms || ms <= 0 || ms > MAX_RANGE_MS) throw badRequest("range must be a duration such as 1h, 24h, 7d or 1y (at most 400d)");
  return { text: s, ms };
}

const rangeQuery = t.Object({ range: t.Optional(t.String({ description: "duration such as 1h, 24h, 7d, or 1y (default 1h)" })) });

/** /api/apps/:slug/request-stats, /api/apps/:slug/metrics, /api/metrics/system */
export function metricsRoutes(ctx: Ctx) {
  return new Elysia({ name: "metrics-routes", prefix: "/api" })
    .use(authPlugin(ctx))
    .get(
      "/apps/:slug/request-stats",
      ({ params, query }) => {
        // a removed app has no stats to show, like a missing one
        const a = requireApp(ctx.appRepo, params.slug);
        const r = parseRange(query.range);
        // everything counted so far is stored first, so the answer includes the last request
        ctx.edge.flush(true);
        return { range: r.text, ...ctx.requestStats.query(a.slug, r.ms) };
      },
      {
        auth: { app: "read" },
        query: rangeQuery,
        detail: { tags: ["apps"], summary: "Requests per second, p50/p95/p99 latency, status codes and top paths over a range" },
      },
    )
    .get(
      "/apps/:slug/metrics",
      ({ params, query }): AppMetrics => {
        const a = requireApp(ctx.appRepo, params.slug);
        const r = parseRange(query.range);
        return { range: r.text, ...ctx.metrics.app(a.slug, r.ms) };
      },
      {
        auth: { app: "read" },
        query: rangeQuery,
        detail: {
          tags: ["apps"],
          summary: "Container metrics per replica over a range: CPU, memory, network and block I/O rates, restarts",
          description:
            "One series per container with rows in the range; every bucket of the tier's step is a point, a bucket " +
            "without a sample has every value null (past 200,000 points, each container's buckets from its first row to " +
            "its last only). The tier: raw (10 s) up to 1h, 1m up to 24h, 5m up to 7d, 1h beyond.",
        },
      },
    )
    .get(
      "/metrics/system",
      ({ query }): SystemMetrics => {
        const r = parseRange(query.range);
        return { range: r.text, ...ctx.metrics.system(r.ms) };
      },
      {
        auth: { role: "any" },
        query: rangeQuery,
        detail: {
          tags: ["system"],
          summary: "Host metrics over a range: CPU, load, memory, swap, disks of data_dir and the Docker root, network",
          description: "Every bucket of the tier's step is a point; a bucket without a sample has every value null.",
        },
      },
    );
}
