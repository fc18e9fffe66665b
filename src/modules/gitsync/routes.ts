/**
 * Git sync routes. The sync worker is not built yet (it has its own issue), so the webhook is never available and
 * answers as CONTRACT says for that case: 404 with an empty body, whatever the request.
 */
import { Elysia } from "elysia";
import type { Ctx } from "../../context";
import { authPlugin } from "../auth/macro";

/** /api/git/* */
export function gitSyncRoutes(ctx: Ctx) {
  if (ctx.config.git_sync.enabled) {
    ctx.logs.logger("gitsync").warn("git_sync.enabled is set, but this version has no git sync worker: nothing will be mirrored");
  }
  return (
    new Elysia({ name: "gitsync-routes", prefix: "/api/git" })
      .use(authPlugin(ctx))
      // the body arrives as raw bytes (see http/body.ts) and is not looked at while the webhook is unavailable
      .post("/webhook", () => new Response(null, { status: 404 }), {
        auth: "public",
        detail: { tags: ["git"], summary: "Push notification from the git host (404, empty, while git sync is unavailable)" },
      })
  );
}
