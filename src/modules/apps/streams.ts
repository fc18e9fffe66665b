/**
 * The container logs stream: log lines of one service (every replica), history first (merged by time), then live
 * until the containers stop. A frame carries `ts` only when the line had a timestamp.
 */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { projectName } from "../../docker/naming";
import type { LogLine } from "../../docker/types";
import { streamHandlers } from "../../http/stream";
import { CLOSE } from "../../http/ws";
import { parseDuration } from "../../lib/duration";
import type { ContainerLogFrame } from "../../shared/apps";
import { authPlugin } from "../auth/macro";

/** `since` as unix seconds: an RFC 3339 time or a duration back from now; null when empty; NaN when malformed. */
export function parseSince(text: string | undefined, now: number): number | null {
  if (!text) return null;
  const d = parseDuration(text);
  if (d !== null) return (now - d) / 1000;
  if (/^\d{4}-\d\d-\d\dT/.test(text)) {
    const t = Date.parse(text);
    if (!Number.isNaN(t)) return t / 1000;
  }
  return Number.NaN;
}

/** SPEC's container log frame of a line: `ts` only when the line has one. */
export function logFrame(l: LogLine): ContainerLogFrame {
  return l.ts ? { ts: l.ts, stream: l.stream, line: l.line } : { stream: l.stream, line: l.line };
}

/** /api/apps/:slug/logs */
export function appStreamRoutes(ctx: Ctx) {
  return new Elysia({ name: "app-stream-routes", prefix: "/api/apps" }).use(authPlugin(ctx)).ws("/:slug/logs", {
    auth: { app: "read" },
    query: t.Object({
      service: t.Optional(t.String()),
      tail: t.Optional(t.String()),
      follow: t.Optional(t.String()),
      since: t.Optional(t.String()),
    }),
    ...streamHandlers<{ service?: string; tail?: string; follow?: string; since?: string }, { slug: string }>(
      ctx,
      "logs",
      async (sock, c) => {
        const engine = ctx.docker.engine;
        const service = c.query.service || "web";
        const tail = c.query.tail === undefined || c.query.tail === "" ? 100 : Number(c.query.tail);
        const follow = c.query.follow !== "false";
        const since = parseSince(c.query.since, ctx.clock.now());
        if (!Number.isInteger(tail) || tail < 0 || Number.isNaN(since)) {
          sock.send({ error: "bad query: tail must be a whole number, since an RFC 3339 time or a duration such as 10m" });
          return sock.close(CLOSE.normal);
        }
        if (!engine) {
          sock.send({ error: "docker is not available" });
          return sock.close(CLOSE.normal);
        }
        const containers = (await engine.containers({ project: projectName(c.params.slug) })).filter(
          (x) => x.service === service,
        );
        if (containers.length === 0) {
          sock.send({ error: `not found: no container for service ${service} of ${c.params.slug}` });
          return sock.close(CLOSE.normal);
        }
        const ac = new AbortController();
        sock.onClose(() => ac.abort());
        const send = (l: LogLine) => sock.send(logFrame(l));

        // history of every replica, merged by time, then the newest `tail` overall
        const started = ctx.clock.now() / 1000;
        const history: LogLine[] = [];
        await Promise.all(
          containers.map(async (x) => {
            for await (const l of engine.logs(x.id, { tail, since: since ?? undefined, follow: false, signal: ac.signal }))
              history.push(l);
          }),
        );
        history.sort((a, b) => (a.ts ?? "").localeCompare(b.ts ?? ""));
        for (const l of history.slice(Math.max(0, history.length - tail))) send(l);
        if (!follow || ac.signal.aborted) return sock.close(CLOSE.normal, "end of history");

        await Promise.all(
          containers.map(async (x) => {
            try {
              for await (const l of engine.logs(x.id, { tail: 0, since: started, follow: true, signal: ac.signal })) send(l);
            } catch {
              // a replica that goes away ends its part of the stream
            }
          }),
        );
        sock.close(CLOSE.normal, "containers stopped");
      },
    ),
  } as any);
}
