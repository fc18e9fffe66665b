/** Routes of health, public host, server info, process logs (REST and stream). */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { streamHandlers } from "../../http/stream";
import { badRequest, HttpError } from "../../lib/errors";
import type { PublicHost, SystemInfo } from "../../shared/system";
import { COMMIT, VERSION } from "../../version";
import { authPlugin } from "../auth/macro";
import { databaseReachable } from "./health";

const HOST =
  /^$|^(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:.]+|[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)$/;

/** /api/health, /api/system/* */
export function systemRoutes(ctx: Ctx) {
  return new Elysia({ name: "system-routes", prefix: "/api" })
    .use(authPlugin(ctx))
    .get(
      "/health",
      () => {
        if (!databaseReachable(ctx.db)) throw new HttpError(503);
        return { status: "ok", version: VERSION };
      },
      { auth: "public", detail: { tags: ["system"], summary: "200 when alive and the database answers, else 503" } },
    )
    .get(
      "/system/info",
      (): SystemInfo => {
        const listeners = ctx.edge.listeners();
        const logs = ctx.logHub.stats();
        const ports = listeners?.ports();
        return {
          version: VERSION,
          commit: COMMIT,
          tls_mode: ctx.config.tls.mode,
          domain: ctx.config.domain || null,
          // where the proxy answers: HTTPS (or HTTP in off mode), and the plain listener, null when disabled
          proxy_port: ports?.main ?? null,
          http_port: ports?.plain ?? null,
          // client connections against the proxy.* caps, and how many the caps refused since start
          proxy_connections: listeners
            ? {
                ...listeners.connections(),
                max: ctx.config.proxy.max_connections,
                max_per_ip: ctx.config.proxy.max_connections_per_ip,
              }
            : null,
          docker: ctx.docker.problem === null ? "ok" : ctx.docker.problem,
          streams: { ...ctx.ws.stats(), log_feeds: logs.feeds, log_viewers: logs.viewers },
        };
      },
      { auth: { role: "any" }, detail: { tags: ["system"], summary: "Server version and mode" } },
    )
    .get("/system/public-host", (): PublicHost => ({ public_host: ctx.settings.publicHost() }), {
      auth: { role: "any" },
      detail: { tags: ["system"], summary: "Host used to build quick-test domains" },
    })
    .put(
      "/system/public-host",
      ({ body, actor }) => {
        const host = body.public_host.trim().toLowerCase();
        if (host.length > 253 || !HOST.test(host)) throw badRequest("public_host must be a host name or IP address");
        const before = ctx.settings.publicHost();
        ctx.db.tx(() => {
          ctx.settings.setPublicHost(host);
          if (before !== host) {
            ctx.activity.record({
              actor,
              category: "system",
              action: "public_host_changed",
              target: host || "(none)",
              summary: `${actor.name} set the public host to ${host || "(none)"}`,
              before: { public_host: before },
              after: { public_host: host },
            });
          }
        });
        return { public_host: host };
      },
      {
        auth: { role: "super_admin" },
        body: t.Object({ public_host: t.String() }),
        detail: { tags: ["system"], summary: "Change the public host" },
      },
    )
    .get("/system/process-logs", () => ctx.logs.snapshot(), {
      auth: { role: "super_admin" },
      response: t.Array(t.String()),
      detail: { tags: ["system"], summary: "Process log buffer, oldest first" },
    })
    .ws("/system/process-logs/stream", {
      auth: { role: "super_admin" },
      ...streamHandlers(ctx, "process-logs", (sock) => {
        for (const line of ctx.logs.snapshot()) sock.send(line);
        sock.onClose(ctx.logs.subscribe((line) => sock.send(line)));
      }),
    } as any);
}
