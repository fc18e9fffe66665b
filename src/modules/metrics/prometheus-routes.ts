/**
 * `GET /metrics`, the Prometheus exposition, on the management listener. Off unless `metrics.prometheus` is true:
 * then it is a 404 like any unknown path (before authentication, so it tells nobody that it exists). On, it is
 * served to API keys of admins only (CONTRACT): a scraper holds a key, and a dashboard session has no business here.
 */
import { Elysia } from "elysia";
import type { Ctx } from "../../context";
import { forbidden, notFound } from "../../lib/errors";
import { VERSION } from "../../version";
import { authPlugin } from "../auth/macro";
import { createExposition, EXPOSITION_CONTENT_TYPE } from "./prometheus";

/** /metrics */
export function prometheusRoutes(ctx: Ctx) {
  const app = new Elysia({ name: "prometheus-routes" }).use(authPlugin(ctx));
  if (!ctx.config.metrics.prometheus) {
    return app.get(
      "/metrics",
      () => {
        throw notFound();
      },
      { auth: "public", detail: { tags: ["system"], summary: "Prometheus exposition (off: metrics.prometheus is false)" } },
    );
  }
  const exposition = createExposition({
    db: ctx.db,
    clock: ctx.clock,
    metrics: () => ctx.metrics,
    requests: () => ctx.edge.totals().entries(),
    version: VERSION,
  });
  return app.get(
    "/metrics",
    ({ principal }) => {
      if (principal.via !== "apikey") throw forbidden();
      return new Response(exposition.render(), { headers: { "content-type": EXPOSITION_CONTENT_TYPE } });
    },
    {
      auth: { role: "admin" },
      detail: {
        tags: ["system"],
        summary: "Prometheus exposition: containers, host, proxy, deploys, alerts (API keys of admins)",
      },
    },
  );
}
