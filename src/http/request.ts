/**
 * Facts about a request the server needs in several places (client address behind trusted proxies, whether it
 * arrived over HTTPS, same-origin), computed once per request.
 */
import type { Server } from "bun";
import { safeEqual } from "../lib/crypto";
import { type CidrSet, clientIp, normalizeIp } from "../lib/net";

export interface RequestMeta {
  /** Client address, honouring trusted_proxies. */
  ip: string;
  /** The request reached us over TLS (directly, or per X-Forwarded-Proto from a trusted proxy). */
  secure: boolean;
  /** Host the client addressed (Host, or X-Forwarded-Host from a trusted proxy). */
  host: string;
}

const cache = new WeakMap<Request, RequestMeta>();

/** Header Sundeck's own proxy sets (with a per-process token) on requests it forwards to the management server. */
export const PROXY_TOKEN_HEADER = "x-sundeck-proxy";

/**
 * Compute (once) the meta of `request` as seen through `server`. Forwarded headers are believed from a trusted proxy
 * address, or from a loopback peer carrying this process's proxy token (Sundeck's own reverse proxy).
 */
export function requestMeta(
  request: Request,
  server: Server<unknown> | null | undefined,
  trusted: CidrSet,
  proxyToken?: string,
): RequestMeta {
  const hit = cache.get(request);
  if (hit) return hit;
  const peer = normalizeIp(server?.requestIP(request)?.address ?? "127.0.0.1");
  const token = request.headers.get(PROXY_TOKEN_HEADER);
  const ownProxy = !!proxyToken && token !== null && (peer === "127.0.0.1" || peer === "::1") && safeEqual(token, proxyToken);
  const viaProxy = ownProxy || (trusted.size > 0 && trusted.has(peer));
  const h = request.headers;
  const url = new URL(request.url);
  const meta: RequestMeta = {
    ip: ownProxy ? (lastHop(h.get("x-forwarded-for")) ?? peer) : clientIp(peer, h.get("x-forwarded-for"), trusted),
    secure: viaProxy ? (h.get("x-forwarded-proto") ?? "").split(",")[0].trim() === "https" : url.protocol === "https:",
    host: (viaProxy && h.get("x-forwarded-host")?.split(",")[0].trim()) || h.get("host") || url.host,
  };
  cache.set(request, meta);
  return meta;
}

/** The right-most entry of X-Forwarded-For: what Sundeck's own proxy appended. */
function lastHop(xff: string | null): string | null {
  const hops = (xff ?? "")
    .split(",")
    .map((h) => normalizeIp(h.trim()))
    .filter(Boolean);
  return hops.length ? hops[hops.length - 1] : null;
}

/** Whether the request's Origin (when present) is the host it addressed. Absent Origin counts as same-origin. */
export function sameOrigin(request: Request, meta: RequestMeta): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  try {
    return new URL(origin).host.toLowerCase() === meta.host.toLowerCase();
  } catch {
    return false;
  }
}
