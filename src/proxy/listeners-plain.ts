/**
 * The plain HTTP listener beside TLS: answers ACME HTTP-01 challenges, serves the hosts whose TLS is off, and
 * redirects everything else with 308 to the same path and query over HTTPS.
 */
import type { EarlyRequest } from "./h1/server";
import type { LocalAnswer } from "./pages";
import type { CertSource } from "./types";

const CHALLENGE_PREFIX = "/.well-known/acme-challenge/";
const HOST_RE = /^([a-z0-9._-]+|\[[0-9a-f:.]+\])$/i;

const text = (status: number, body: string, headers: Record<string, string> = {}): LocalAnswer => ({
  status,
  headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  body,
});

/** Host header without its port; null when missing or malformed. */
export function hostOnly(host: string | null): string | null {
  if (!host) return null;
  const h = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d*$/, "");
  return HOST_RE.test(h) ? h.toLowerCase() : null;
}

export interface PlainOptions {
  certs: CertSource;
  /** The TLS port redirects point at (left out of the URL when 443). */
  httpsPort: () => number;
  /** Hosts answered here by the proxy instead of redirected (TLS off for them). */
  plainHost?: (host: string) => boolean;
}

/** The plain listener's own answers (the raw engine's `early` hook); null passes the request to the proxy. */
export function plainAnswers(opts: PlainOptions) {
  return (req: EarlyRequest): LocalAnswer | null => {
    const path = req.target;
    if (path.startsWith(CHALLENGE_PREFIX) && (req.method === "GET" || req.method === "HEAD")) {
      const token = path.slice(CHALLENGE_PREFIX.length).split("?")[0];
      const answer = token ? opts.certs.http01(token) : null;
      if (answer !== null) return text(200, answer);
      return text(404, "Not Found");
    }
    const host = hostOnly(req.host);
    if (!host) return text(400, "Bad Request: missing or invalid host header");
    if (opts.plainHost?.(host)) return null;
    const port = opts.httpsPort();
    const location = `https://${host}${port === 443 ? "" : `:${port}`}${path}`;
    return text(308, "Permanent Redirect", { location });
  };
}
