/**
 * The plain HTTP listener beside TLS: answers ACME HTTP-01 challenges, serves the hosts whose TLS is off, and
 * redirects everything else with 308 to the same path and query over HTTPS.
 */
import type { Server } from "bun";
import type { CertSource, ConnInfo, ProxyHandler } from "./types";

const CHALLENGE_PREFIX = "/.well-known/acme-challenge/";
const HOST_RE = /^([a-z0-9._-]+|\[[0-9a-f:.]+\])$/i;

const text = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8", ...headers } });

/** Host header without its port; null when missing or malformed. */
export function hostOnly(host: string | null): string | null {
  if (!host) return null;
  const h = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d*$/, "");
  return HOST_RE.test(h) ? h.toLowerCase() : null;
}

/** Path and query of a request exactly as sent (no normalisation). */
export function rawPathAndQuery(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start < 0 ? "/" : url.slice(start);
}

export interface PlainOptions {
  certs: CertSource;
  handler: ProxyHandler;
  /** The TLS port redirects point at (left out of the URL when 443). */
  httpsPort: () => number;
  /** Hosts answered here by the handler instead of redirected (TLS off for them). */
  plainHost?: (host: string) => boolean;
  info: (server: Server<unknown>, req: Request) => ConnInfo;
}

/** The fetch function of the plain listener. */
export function plainFetch(opts: PlainOptions) {
  return (req: Request, server: Server<unknown>): Response | Promise<Response | undefined> | undefined => {
    const path = rawPathAndQuery(req.url);
    if (path.startsWith(CHALLENGE_PREFIX) && (req.method === "GET" || req.method === "HEAD")) {
      const token = path.slice(CHALLENGE_PREFIX.length).split("?")[0];
      const answer = token ? opts.certs.http01(token) : null;
      if (answer !== null) return text(200, answer);
      return text(404, "Not Found");
    }
    const host = hostOnly(req.headers.get("host"));
    if (!host) return text(400, "Bad Request: missing or invalid host header");
    if (opts.plainHost?.(host)) return opts.handler.fetch(req, server, opts.info(server, req));
    const port = opts.httpsPort();
    const location = `https://${host}${port === 443 ? "" : `:${port}`}${path}`;
    return text(308, "Permanent Redirect", { location });
  };
}
