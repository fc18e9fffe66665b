/**
 * Routing chosen at a template's deploy, written as labels on its web service: `quick` (a host under sslip.io that
 * resolves to `public_host`, TLS `local` unless asked), `domain` (a host of the user's), or `none` (no route).
 */
import { isMap, parseDocument } from "yaml";
import { badRequest } from "../../lib/errors";
import { quickTestHost } from "../../shared/quickhost";
import type { RoutingMode } from "../../shared/templates";
import { TLS_MODES } from "../../shared/tls";
import { isHost } from "./variables";

export interface Routing {
  mode: RoutingMode;
  host: string | null;
  tls: string | null;
}

/** The quick-test host of an app: `<slug>.<ip>.sslip.io`, an IPv6 address written with dashes. */
export function quickHost(slug: string, publicHost: string): string {
  const host = quickTestHost(slug, publicHost);
  if (!host)
    throw badRequest(
      "a quick test needs public_host to be this server's public IP address (PUT /api/system/public-host, or Settings); " +
        `it is ${publicHost ? JSON.stringify(publicHost) : "not set"}`,
    );
  return host;
}

/** Check the routing a deploy asks for. */
export function chooseRouting(
  slug: string,
  body: { mode?: unknown; domain?: unknown; tls?: unknown } | undefined,
  publicHost: string,
): Routing {
  const mode = body?.mode ?? "none";
  const tls = body?.tls === undefined || body?.tls === null || body?.tls === "" ? null : body.tls;
  if (tls !== null && (typeof tls !== "string" || !(TLS_MODES as readonly string[]).includes(tls)))
    throw badRequest(`routing.tls must be one of ${TLS_MODES.join(", ")}`);
  if (mode === "none") return { mode, host: null, tls: null };
  if (mode === "quick") return { mode, host: quickHost(slug, publicHost), tls: tls ?? "local" };
  if (mode === "domain") {
    const host = typeof body?.domain === "string" ? body.domain.trim().toLowerCase() : "";
    if (!isHost(host)) throw badRequest("routing.domain must be a host name such as app.example.com");
    return { mode, host, tls };
  }
  throw badRequest("routing.mode must be quick, domain or none");
}

/** The compose text with the route's labels on `service` (comments and layout of the rest kept). */
export function withRouteLabels(compose: string, service: string, port: number, r: Routing): string {
  if (!r.host) return compose;
  const doc = parseDocument(compose);
  const svc = doc.getIn(["services", service]);
  if (!isMap(svc)) throw new Error(`the template has no service ${service}`);
  if (!svc.has("labels")) svc.set("labels", doc.createNode({}));
  const labels = svc.get("labels");
  if (!isMap(labels)) throw new Error(`the labels of ${service} are not a mapping`);
  labels.set("sundeck.domain", r.host);
  labels.set("sundeck.port", String(port));
  if (r.tls) labels.set("sundeck.tls", r.tls);
  // flow lists as the templates write them (["CMD", "wget"], not [ "CMD", "wget" ]), long lines not folded
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}
