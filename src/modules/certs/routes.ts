/**
 * Routes of certificates and the local CA: per-app certificate status, uploads of custom certificates (PEM, 256 KiB,
 * key must match, expiry shown), their removal, and the public /trust page with the CA download.
 */
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { noContent } from "../../http/respond";
import { HttpError, notFound } from "../../lib/errors";
import type { CertManager } from "../../proxy/certs/manager";
import { caDownload, trustResponse } from "../../proxy/certs/trust";
import { requireApp } from "../apps/lookup";
import { authPlugin } from "../auth/macro";

const HOST = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** /api/apps/:slug/certs, /trust */
export function certRoutes(ctx: Ctx) {
  const certs = () => {
    const c = ctx.edge.certs();
    if (!c) throw new HttpError(503, "the proxy is not running");
    return c;
  };
  const app = (slug: string) => requireApp(ctx.appRepo, slug);
  const domainOf = (text: string) => {
    const d = decodeURIComponent(text).toLowerCase();
    if (d.length > 253 || !HOST.test(d)) throw new HttpError(400, "domain must be a host name");
    return d;
  };
  const infoJson = (i: NonNullable<ReturnType<CertManager["certInfo"]>>) => ({
    domain: i.host,
    mode: i.mode,
    status: i.status,
    source: i.source,
    not_before: i.notBefore,
    not_after: i.notAfter,
    issuer: i.issuer,
    subject: i.subject,
    sans: i.sans,
    fingerprint: i.fingerprint,
    error: i.error,
    next_attempt_at: i.nextAttemptAt,
  });

  return new Elysia({ name: "cert-routes" })
    .use(authPlugin(ctx))
    .get(
      "/api/apps/:slug/certs",
      ({ params }) => {
        const a = app(params.slug);
        const hosts = ctx.appViews.view(a).endpoints.flatMap((e) => e.hosts);
        return [...new Set(hosts)].map((h) => {
          const info = ctx.edge.certs()?.certInfo(h);
          return info
            ? infoJson(info)
            : {
                domain: h,
                mode: null,
                status: "none",
                source: null,
                not_before: null,
                not_after: null,
                issuer: null,
                subject: null,
                sans: null,
                fingerprint: null,
                error: null,
                next_attempt_at: null,
              };
        });
      },
      { auth: { app: "read" }, detail: { tags: ["certs"], summary: "Certificates of the app's hosts: mode, status, expiry" } },
    )
    .put(
      "/api/apps/:slug/certs/:domain",
      async ({ params, body, actor }) => {
        const a = app(params.slug);
        const domain = domainOf(params.domain);
        const info = await certs().putCustom(a.slug, domain, body.cert, body.key);
        ctx.db.tx(() =>
          ctx.activity.record({
            actor,
            category: "endpoint",
            action: "cert_uploaded",
            target: domain,
            appSlug: a.slug,
            appId: a.id,
            summary: `${actor.name} uploaded a certificate for ${domain} (valid until ${info.notAfter.slice(0, 10)})`,
            after: { domain, not_after: info.notAfter, issuer: info.issuer, fingerprint: info.fingerprint },
          }),
        );
        return {
          domain,
          not_before: info.notBefore,
          not_after: info.notAfter,
          issuer: info.issuer,
          subject: info.subject,
          sans: info.sans,
          fingerprint: info.fingerprint,
        };
      },
      {
        auth: { app: "write" },
        body: t.Object({ cert: t.String({ minLength: 1 }), key: t.String({ minLength: 1 }) }),
        detail: { tags: ["certs"], summary: "Upload a custom certificate (PEM chain and key; 256 KiB; the key must match)" },
      },
    )
    .delete(
      "/api/apps/:slug/certs/:domain",
      async ({ params, actor, set }) => {
        const a = app(params.slug);
        const domain = domainOf(params.domain);
        if (!(await certs().removeCustom(a.slug, domain))) throw notFound();
        ctx.db.tx(() =>
          ctx.activity.record({
            actor,
            category: "endpoint",
            action: "cert_removed",
            target: domain,
            appSlug: a.slug,
            appId: a.id,
            summary: `${actor.name} removed the certificate for ${domain}`,
            before: { domain },
          }),
        );
        return noContent(set);
      },
      { auth: { app: "write" }, detail: { tags: ["certs"], summary: "Remove an uploaded certificate" } },
    )
    .get(
      "/trust",
      () => {
        const ca = ctx.edge.certs()?.localCa();
        if (!ca) throw notFound();
        return trustResponse(ca);
      },
      { auth: "public", detail: { tags: ["certs"], summary: "How to trust the local CA" } },
    )
    .get(
      "/trust/ca.crt",
      () => {
        const ca = ctx.edge.certs()?.localCa();
        if (!ca) throw notFound();
        return caDownload(ca);
      },
      { auth: "public", detail: { tags: ["certs"], summary: "The local CA certificate (PEM)" } },
    );
}
