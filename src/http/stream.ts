/**
 * The handler set behind every WebSocket route: the origin check, hub registration, deadline resets and cleanup.
 * A stream supplies only `start`, which sends frames through its StreamSocket.
 */
import type { Ctx } from "../context";
import type { Principal } from "../shared/principal";
import { type RequestMeta, sameOrigin } from "./request";
import { CLOSE, type StreamSocket } from "./ws";

/** What `start` learns about the upgrade request. */
export interface StreamContext<Q = Record<string, string | undefined>, P = Record<string, string>> {
  principal: Principal;
  meta: RequestMeta;
  query: Q;
  params: P;
  request: Request;
}

const rawOf = (ws: any) => ws?.raw ?? ws;

/** Elysia `.ws()` handlers for a stream. */
export function streamHandlers<Q, P>(
  ctx: Ctx,
  name: string,
  start: (sock: StreamSocket, c: StreamContext<Q, P>) => void | Promise<void>,
) {
  const log = ctx.logs.logger("ws");
  return {
    open(ws: any) {
      const raw = rawOf(ws);
      const data = ws.data as StreamContext<Q, P>;
      if (!sameOrigin(data.request, data.meta)) {
        log.warn("websocket refused: cross-origin", { stream: name, origin: data.request.headers.get("origin") ?? "" });
        raw.close(CLOSE.policy, "origin not allowed");
        return;
      }
      const refused = ctx.ws.admit(data.principal);
      if (refused) {
        log.warn("websocket refused", { stream: name, reason: refused, user: data.principal.user.username });
        raw.close(CLOSE.policy, refused);
        return;
      }
      const sock = ctx.ws.add(raw, data.principal);
      Promise.resolve()
        .then(() => start(sock, data))
        .catch((e) => {
          log.error("stream failed", { stream: name, error: e as Error });
          sock.close(CLOSE.serverError, "stream failed");
        });
    },
    message(ws: any) {
      ctx.ws.touch(rawOf(ws));
    },
    ping(ws: any) {
      ctx.ws.touch(rawOf(ws));
    },
    pong(ws: any) {
      ctx.ws.touch(rawOf(ws));
    },
    drain(ws: any) {
      ctx.ws.drain(rawOf(ws));
    },
    close(ws: any) {
      ctx.ws.closed(rawOf(ws));
    },
  };
}
