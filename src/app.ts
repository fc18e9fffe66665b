/**
 * createApp(ctx): the management HTTP application. Global concerns (security headers, the API rate limit, body
 * parsing, error mapping) are registered here once; every module adds its routes. It never listens.
 */
import { Elysia } from "elysia";
import type { Ctx } from "./context";
import { dashboardRoutes } from "./dashboard/routes";
import { parseBody } from "./http/body";
import { errorHandler } from "./http/errors";
import { openApiDocument } from "./http/openapi";
import { requestMeta } from "./http/request";
import { HSTS, SECURITY_HEADERS } from "./http/security";
import { WS_READ_LIMIT } from "./http/ws";
import { parseDuration } from "./lib/duration";
import { errorResponse } from "./lib/errors";
import { RateLimiter } from "./lib/ratelimit";
import { activityRoutes } from "./modules/activity/routes";
import { alertRoutes } from "./modules/alerts/routes";
import { apiKeyRoutes } from "./modules/apikeys/routes";
import { appRoutes } from "./modules/apps/routes";
import { authPlugin } from "./modules/auth/macro";
import { authRoutes } from "./modules/auth/routes";
import { backupRoutes } from "./modules/backups/routes";
import { stateBackupRoutes } from "./modules/backups/state-routes";
import { certRoutes } from "./modules/certs/routes";
import { deployRoutes } from "./modules/deploys/routes";
import { deployStreamRoutes } from "./modules/deploys/streams";
import { gitSyncRoutes } from "./modules/gitsync/routes";
import { logRoutes } from "./modules/logs/routes";
import { prometheusRoutes } from "./modules/metrics/prometheus-routes";
import { metricsRoutes } from "./modules/metrics/routes";
import { registryRoutes } from "./modules/registries/routes";
import { systemRoutes } from "./modules/system/routes";
import { templateRoutes } from "./modules/templates/routes";
import { snippetRoutes } from "./modules/templates/snippet-routes";
import { userRoutes } from "./modules/users/routes";
import { webhookRoutes } from "./modules/webhooks/routes";

/** Paths the global rate limit leaves alone: monitors poll health. */
const UNLIMITED = new Set(["/api/health"]);

/** The API rate limiter of `ratelimit.*`: returns a 429 response when the caller is over, else null. */
export function apiRateLimit(ctx: Ctx) {
  const rl = ctx.config.ratelimit;
  const limiter = new RateLimiter({ requests: rl.requests, windowMs: parseDuration(rl.window)!, burst: rl.burst }, ctx.clock);
  const header = rl.by.startsWith("header:") ? rl.by.slice(7).toLowerCase() : null;
  return (request: Request, server: any, path: string): Response | null => {
    if (!path.startsWith("/api/") || UNLIMITED.has(path)) return null;
    const ip = requestMeta(request, server, ctx.trusted, ctx.proxyToken).ip;
    const key = rl.by === "path" ? `p:${path}` : header ? `h:${request.headers.get(header) ?? `ip:${ip}`}` : `ip:${ip}`;
    const d = limiter.take(key);
    if (d.ok) return null;
    return errorResponse(429, undefined, { ...SECURITY_HEADERS, "retry-after": String(d.retryAfter) });
  };
}

/** Build the management application. */
export function createApp(ctx: Ctx) {
  const limit = apiRateLimit(ctx);
  const app = new Elysia({
    websocket: { maxPayloadLength: WS_READ_LIMIT, idleTimeout: 0, sendPings: false, perMessageDeflate: false },
  })
    .onRequest(({ request, server, set }) => {
      Object.assign(set.headers, SECURITY_HEADERS);
      if (requestMeta(request, server, ctx.trusted, ctx.proxyToken).secure) set.headers["strict-transport-security"] = HSTS;
      const path = new URL(request.url).pathname;
      return limit(request, server, path) ?? undefined;
    })
    .onParse(({ request, contentType, path }) => parseBody(request, contentType, path))
    .onError(errorHandler(ctx.logs.logger("http")))
    .use(systemRoutes(ctx))
    .use(authRoutes(ctx))
    .use(userRoutes(ctx))
    .use(apiKeyRoutes(ctx))
    .use(activityRoutes(ctx))
    .use(appRoutes(ctx))
    .use(deployRoutes(ctx))
    .use(deployStreamRoutes(ctx))
    .use(logRoutes(ctx))
    .use(registryRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(alertRoutes(ctx))
    .use(backupRoutes(ctx))
    .use(stateBackupRoutes(ctx))
    .use(certRoutes(ctx))
    .use(metricsRoutes(ctx))
    .use(prometheusRoutes(ctx))
    .use(gitSyncRoutes(ctx))
    .use(snippetRoutes(ctx))
    .use(templateRoutes(ctx));

  let doc: unknown;
  return app
    .use(authPlugin(ctx))
    .get("/api/openapi.json", () => (doc ??= openApiDocument(app)), {
      auth: { role: "any" },
      detail: { tags: ["system"], summary: "This document" },
    })
    .use(dashboardRoutes());
}

export type App = ReturnType<typeof createApp>;
