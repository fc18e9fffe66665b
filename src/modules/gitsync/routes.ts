/**
 * Git sync routes: the configuration (super-admin), the status, sync-now and apply-pending (admins), and the
 * public webhook, verified with an HMAC-SHA256 of the raw body and answering 404 with an empty body whenever it is
 * not available (CONTRACT).
 */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { hmacHex, safeEqual } from "../../lib/crypto";
import { unauthorized } from "../../lib/errors";
import { authPlugin } from "../auth/macro";

const ConfigBody = t.Object(
  {
    enabled: t.Optional(t.Boolean()),
    remote: t.Optional(t.String({ maxLength: 2048 })),
    branch: t.Optional(t.String({ maxLength: 255 })),
    author_name: t.Optional(t.String({ maxLength: 255 })),
    author_email: t.Optional(t.String({ maxLength: 255 })),
    ssh_key_path: t.Optional(t.String({ maxLength: 4096 })),
    https_username: t.Optional(t.String({ maxLength: 255 })),
    https_token: t.Optional(t.String({ maxLength: 4096, description: 'write-only: "********" or omitted keeps the stored one' })),
    poll_interval: t.Optional(t.String({ maxLength: 32, description: 'a duration such as "60s"' })),
    webhook_secret: t.Optional(
      t.String({ maxLength: 4096, description: 'write-only: "********" or omitted keeps the stored one' }),
    ),
    poll_enabled: t.Optional(t.Boolean()),
    auto_push_enabled: t.Optional(t.Boolean()),
    auto_apply_enabled: t.Optional(t.Boolean()),
    webhook_enabled: t.Optional(t.Boolean()),
    source: t.Optional(t.String({ description: "ignored (responses carry it)" })),
  },
  // kept, so the service names an unknown field (a typo) instead of it being dropped silently
  { additionalProperties: true },
);

/** `sha256=<hex>` over the exact bytes received, compared in constant time. */
export function webhookSignatureOk(secret: string, body: Uint8Array, header: string | null): boolean {
  if (!header || !/^sha256=[0-9a-fA-F]{64}$/.test(header)) return false;
  return safeEqual(`sha256=${hmacHex(secret, body)}`, header.toLowerCase());
}

/** /api/git/* */
export function gitSyncRoutes(ctx: Ctx) {
  return (
    new Elysia({ name: "gitsync-routes", prefix: "/api/git" })
      .use(authPlugin(ctx))
      .get("/config", () => ctx.gitSync.config(), {
        auth: { role: "super_admin" },
        detail: { tags: ["git"], summary: "The git sync configuration in force (secrets masked) and where it comes from" },
      })
      .put("/config", ({ body, actor }) => ctx.gitSync.putConfig(body, actor), {
        auth: { role: "super_admin" },
        body: ConfigBody,
        detail: {
          tags: ["git"],
          summary: "Store a git sync configuration (overrides the file) and restart the worker with it",
        },
      })
      .get("/status", () => ctx.gitSync.status(), {
        auth: { role: "admin" },
        detail: { tags: ["git"], summary: "Worker state, behind by N, last sync, last commit, last error, conflicts" },
      })
      .post(
        "/sync-now",
        ({ set }) => {
          ctx.gitSync.syncNow();
          set.status = 202;
          return ctx.gitSync.status();
        },
        { auth: { role: "admin" }, detail: { tags: ["git"], summary: "Fetch, apply and push now (202; 409 while off)" } },
      )
      .post(
        "/apply-pending",
        ({ set }) => {
          set.status = ctx.gitSync.applyPending() ? 202 : 200;
          return ctx.gitSync.status();
        },
        {
          auth: { role: "admin" },
          detail: { tags: ["git"], summary: "Apply the remote commits counted in fetch-only mode (200 when up to date)" },
        },
      )
      // the body arrives as raw bytes (http/body.ts): the signature is over exactly what was sent
      .post(
        "/webhook",
        ({ body, request }) => {
          const secret = ctx.gitSync.webhookSecret();
          if (!secret) return new Response(null, { status: 404 });
          const raw = body instanceof Uint8Array ? body : new Uint8Array();
          if (!webhookSignatureOk(secret, raw, request.headers.get("x-hub-signature-256"))) throw unauthorized();
          ctx.gitSync.notified();
          return new Response(JSON.stringify({ queued: true }), {
            status: 202,
            headers: { "content-type": "application/json" },
          });
        },
        {
          auth: "public",
          detail: {
            tags: ["git"],
            summary: "Push notification from the git host (X-Hub-Signature-256); 404 with an empty body when unavailable",
          },
        },
      )
  );
}
