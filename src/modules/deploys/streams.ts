/**
 * The deploy-logs stream: the in-flight operation's output (lines so far, live lines, one done frame, close), or
 * after 3 s with nothing in flight the single `{done: true, action: "none"}` frame.
 */
import { Elysia } from "elysia";
import type { Ctx } from "../../context";
import { streamHandlers } from "../../http/stream";
import { CLOSE } from "../../http/ws";
import { authPlugin } from "../auth/macro";

/** /api/apps/:slug/deploy-logs */
export function deployStreamRoutes(ctx: Ctx) {
  return new Elysia({ name: "deploy-stream-routes", prefix: "/api/apps" }).use(authPlugin(ctx)).ws("/:slug/deploy-logs", {
    auth: { app: "read" },
    ...streamHandlers<Record<string, string>, { slug: string }>(ctx, "deploy-logs", (sock, c) => {
      const stop = ctx.deployOutput.follow(c.params.slug, (frame) => {
        sock.send(frame);
        if (frame.done) sock.close(CLOSE.normal, "deploy finished");
      });
      sock.onClose(stop);
    }),
  } as any);
}
