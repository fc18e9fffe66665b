import type { ConnInfo } from "./types";

/**
 * Header rewriting at the proxy: hop-by-hop headers removed both ways (RFC 9110 7.6.1), X-Forwarded-* set from what
 * the listener knows, and the management token header stripped from clients and added only toward the management
 * server. Framing (Content-Length, Transfer-Encoding, Connection) never passes through: the raw engine writes its own.
 */

/**
 * Headers that describe one connection or one message's framing, never forwarded. `proxy-*` are removed by prefix as
 * well.
 */
const HOP_BY_HOP = [
  "connection",
  "content-length",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
] as const;

const HOP = new Set<string>(HOP_BY_HOP);

/** Header carrying the per-process token toward the management server (matches src/http/request.ts). */
export const PROXY_TOKEN_HEADER = "x-sundeck-proxy";

/** HSTS sent on TLS routes: a year, without includeSubDomains (other apps may live on sibling hosts). */
export const HSTS_VALUE = "max-age=31536000";

/** Names listed in a Connection header, lower-cased. */
export function connectionTokens(value: string | null): string[] {
  if (!value) return [];
  const out: string[] = [];
  for (const part of value.split(",")) {
    const t = part.trim().toLowerCase();
    if (t) out.push(t);
  }
  return out;
}

export interface UpstreamHeaderOptions {
  /** Resolved client address. */
  clientIp: string;
  /** The request arrived over TLS. */
  secure: boolean;
  /** The authority the client asked for (Host header, or the absolute-form URL's), sent on as Host. */
  host: string;
  /** The peer is a trusted proxy: keep its X-Forwarded-* (and Forwarded, X-Real-IP) instead of replacing them. */
  trustForwarded: boolean;
  /** The token to add as X-Sundeck-Proxy (management route only), else null. */
  proxyToken: string | null;
  /** The request has no body to send (Expect is then dropped). */
  bodyless: boolean;
  /** A WebSocket upgrade: ask the upstream for it (Connection and Upgrade are otherwise hop-by-hop). */
  upgrade?: boolean;
}

/**
 * The options every forwarded request shares: who the client is (from the listener), the Host to send, and the
 * management token when the route is the management server's.
 */
export function headerOptions(
  f: { info: ConnInfo; host: string; route: { app: string | null } },
  proxyToken: string,
  bodyless: boolean,
): UpstreamHeaderOptions {
  return {
    clientIp: f.info.clientIp,
    secure: f.info.secure,
    host: f.host,
    trustForwarded: f.info.trustForwarded === true,
    proxyToken: f.route.app === null ? proxyToken : null,
    bodyless,
  };
}

/** Request headers as a Headers or the raw engine's HeaderList holds them. */
export interface HeaderSource {
  get(name: string): string | null;
  [Symbol.iterator](): Iterator<[string, string]>;
}

/**
 * X-Forwarded-For toward the upstream. From a trusted proxy the chain is kept as far as the resolved client (hops to
 * its right are trusted proxies), and the client is appended when the chain does not name it; otherwise the chain
 * starts afresh with the client. The last entry is always the resolved client.
 */
export function forwardedFor(incoming: string | null, clientIp: string, trustForwarded: boolean): string {
  if (!trustForwarded || !incoming) return clientIp;
  const hops = incoming.split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    if (hops[i].trim() === clientIp) {
      return hops
        .slice(0, i + 1)
        .map((h) => h.trim())
        .join(", ");
    }
  }
  return `${incoming.trim()}, ${clientIp}`;
}

/**
 * The headers to send upstream, as pairs: end-to-end request headers plus Host and X-Forwarded-*; no framing (the
 * engine adds its own), no names with `_`. A header named in Connection is dropped, but never one the proxy sets.
 */
export function upstreamHeaderPairs(incoming: HeaderSource, o: UpstreamHeaderOptions): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const conn = incoming.get("connection");
  const named = conn ? connectionTokens(conn) : null;
  let realIp = false;
  for (const [name, value] of incoming) {
    if (HOP.has(name) || name.startsWith("proxy-") || (named?.includes(name) ?? false)) continue;
    // CGI-style servers (WSGI, Rack, PHP) read `X_Forwarded_For` as X-Forwarded-For: a client could place its own
    // value before the proxy's. Dropped like nginx does by default.
    if (name.includes("_")) continue;
    switch (name) {
      case "host":
      case PROXY_TOKEN_HEADER:
      case "x-forwarded-for":
      case "x-forwarded-proto":
      case "x-forwarded-host":
        continue;
      case "forwarded":
        if (!o.trustForwarded) continue;
        break;
      case "x-real-ip":
        if (!o.trustForwarded) continue;
        realIp = true;
        break;
      case "expect":
        // no body follows (the upstream's 100 Continue otherwise reaches the client)
        if (o.bodyless) continue;
        break;
    }
    out.push([name, value]);
  }
  out.push(["host", o.host]);
  out.push(["x-forwarded-for", forwardedFor(incoming.get("x-forwarded-for"), o.clientIp, o.trustForwarded)]);
  const proto = o.trustForwarded ? incoming.get("x-forwarded-proto") : null;
  out.push(["x-forwarded-proto", proto || (o.secure ? "https" : "http")]);
  const fwdHost = o.trustForwarded ? incoming.get("x-forwarded-host") : null;
  out.push(["x-forwarded-host", fwdHost || o.host]);
  if (!realIp) out.push(["x-real-ip", o.clientIp]);
  if (o.proxyToken !== null) out.push([PROXY_TOKEN_HEADER, o.proxyToken]);
  if (o.upgrade) out.push(["connection", "upgrade"], ["upgrade", "websocket"]);
  return out;
}

/**
 * An upstream response's headers for the client: hop-by-hop and framing ones removed (and any named in Connection),
 * HSTS added when asked and the upstream set none. `keepUpgrade` keeps a 101's Connection and Upgrade.
 */
export function responseHeaderPairs(incoming: HeaderSource, hsts: boolean, keepUpgrade = false): Array<[string, string]> {
  const conn = incoming.get("connection");
  const named = conn ? connectionTokens(conn) : null;
  const out: Array<[string, string]> = [];
  let hasHsts = false;
  for (const [name, value] of incoming) {
    if (keepUpgrade && (name === "upgrade" || name === "connection")) {
      out.push([name, value]);
      continue;
    }
    if (HOP.has(name) || (named?.includes(name) ?? false)) continue;
    if (name === "strict-transport-security") hasHsts = true;
    out.push([name, value]);
  }
  if (hsts && !hasHsts) out.push(["strict-transport-security", HSTS_VALUE]);
  return out;
}
