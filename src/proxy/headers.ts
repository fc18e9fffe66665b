/**
 * Header rewriting at the proxy: hop-by-hop headers removed both ways (RFC 9110 7.6.1), X-Forwarded-* set from what
 * the listener knows, and the management token header stripped from clients and added only toward the management
 * server.
 */

/** Headers that describe one connection, never forwarded. `proxy-*` are removed by prefix as well. */
export const HOP_BY_HOP = [
  "connection",
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

/** Whether a header name is hop-by-hop (fixed list or `proxy-*`). */
export function isHopByHop(name: string): boolean {
  return HOP.has(name) || name.startsWith("proxy-");
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
  /** The request has no body to send (Content-Length and Expect are then dropped). */
  bodyless: boolean;
  /** Also drop the WebSocket handshake headers (the upstream WebSocket client makes its own). */
  websocket?: boolean;
}

// the upstream WebSocket client makes its own handshake; requested subprotocols go through its `protocols` option
const WS_HANDSHAKE = new Set([
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-extensions",
  "sec-websocket-accept",
  "sec-websocket-protocol",
]);

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

/** The headers to send upstream: end-to-end request headers plus X-Forwarded-*, Host kept. */
export function upstreamHeaders(incoming: Headers, o: UpstreamHeaderOptions): Headers {
  const out = new Headers();
  const conn = incoming.get("connection");
  const named = conn ? connectionTokens(conn) : null;
  for (const [name, value] of incoming) {
    if (HOP.has(name) || name.startsWith("proxy-") || (named?.includes(name) ?? false)) continue;
    switch (name) {
      case "host":
      case PROXY_TOKEN_HEADER:
      case "x-forwarded-for":
      case "x-forwarded-proto":
      case "x-forwarded-host":
        continue;
      case "forwarded":
      case "x-real-ip":
        if (!o.trustForwarded) continue;
        break;
      case "content-length":
      case "expect":
        // Bun's fetch neither waits for 100 Continue nor sends a body it was not given
        if (o.bodyless || name === "expect") continue;
        break;
      default:
        if (o.websocket && WS_HANDSHAKE.has(name)) continue;
    }
    out.append(name, value);
  }
  out.set("host", o.host);
  out.set("x-forwarded-for", forwardedFor(incoming.get("x-forwarded-for"), o.clientIp, o.trustForwarded));
  const proto = o.trustForwarded ? incoming.get("x-forwarded-proto") : null;
  out.set("x-forwarded-proto", proto || (o.secure ? "https" : "http"));
  const fwdHost = o.trustForwarded ? incoming.get("x-forwarded-host") : null;
  out.set("x-forwarded-host", fwdHost || o.host);
  if (!o.trustForwarded || !out.has("x-real-ip")) out.set("x-real-ip", o.clientIp);
  if (o.proxyToken !== null) out.set(PROXY_TOKEN_HEADER, o.proxyToken);
  return out;
}

/**
 * Clean an upstream response's headers in place: hop-by-hop ones removed (and any named in Connection), HSTS added
 * when asked and the upstream set none.
 */
export function cleanResponseHeaders(h: Headers, hsts: boolean): void {
  const conn = h.get("connection");
  if (conn) for (const t of connectionTokens(conn)) h.delete(t);
  for (const name of HOP_BY_HOP) h.delete(name);
  if (hsts && !h.has("strict-transport-security")) h.set("strict-transport-security", HSTS_VALUE);
}
