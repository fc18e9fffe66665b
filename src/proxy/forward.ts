/**
 * Forwarding one HTTP request to an upstream replica with fetch: bodies stream both ways (nothing is buffered),
 * connections are pooled by Bun, a replica that refuses (or leaves the route table while a bodyless idempotent
 * request waits on it) hands the request to another replica once, and a replica that sends no response headers in
 * time answers 504.
 */
import type { Log } from "../log/logger";
import { cleanResponseHeaders, headerOptions, upstreamHeaders } from "./headers";
import { errorPage } from "./pages";
import type { Route } from "./route-table";
import type { ConnInfo } from "./types";

/** Methods safe to send twice (RFC 9110 9.2.2). */
export const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

/** Error codes meaning the connection was never made, so even a request with a body was not sent. */
export const NOT_CONNECTED = new Set(["ECONNREFUSED", "ConnectionRefused"]);

/** Abort reason for an attempt whose replica left the route table. */
export const GONE = new Error("upstream left the route table");

/**
 * Bodyless idempotent attempts waiting for response headers, by upstream. A stopped container's address stops
 * answering ARP, so a connect to it hangs for seconds; when the replica leaves the table those attempts are
 * abandoned and retried elsewhere instead.
 */
/** Something that can give up on its attempt: fetch's AbortController, or a raw-engine exchange. */
export interface Abandonable {
  abort(reason?: unknown): void;
}

export class WaitingAttempts {
  private readonly byUpstream = new Map<string, Set<Abandonable>>();

  add(upstream: string, ac: Abandonable): void {
    let set = this.byUpstream.get(upstream);
    if (set === undefined) this.byUpstream.set(upstream, (set = new Set()));
    set.add(ac);
  }

  delete(upstream: string, ac: Abandonable): void {
    const set = this.byUpstream.get(upstream);
    if (set === undefined) return;
    set.delete(ac);
    if (set.size === 0) this.byUpstream.delete(upstream);
  }

  /** Abort the attempts on every upstream not in `live`; returns how many. */
  abandon(live: ReadonlySet<string>): number {
    let n = 0;
    for (const [upstream, set] of this.byUpstream) {
      if (live.has(upstream)) continue;
      for (const ac of set) {
        ac.abort(GONE);
        n++;
      }
      this.byUpstream.delete(upstream);
    }
    return n;
  }
}

export interface ForwardRequest {
  route: Route;
  /** The replica chosen first (`host:port`). */
  upstream: string;
  /** Path and query to send (`/a/b?c`). */
  target: string;
  /** Authority the client addressed, sent on as Host. */
  host: string;
  info: ConnInfo;
  /** Authority and path of the request, for finding another replica in the current table. */
  authority: string;
  path: string;
}

export interface ForwardOptions {
  /** Most ms to wait for response headers before answering 504. */
  headersMs: number;
  /** Token added as X-Sundeck-Proxy toward the management upstream. */
  proxyToken: string;
  log: Log;
  waiting: WaitingAttempts;
  /** Another replica for the request (from the current table), never `failed`; null when there is none. */
  reroute(authority: string, path: string, failed: string): string | null;
}

function errorCode(e: unknown): string {
  return (e as { code?: string })?.code ?? "";
}

/** Send the request upstream and return its response (headers cleaned), or a 502/504 page. */
export async function forward(req: Request, f: ForwardRequest, o: ForwardOptions): Promise<Response> {
  const { route, info } = f;
  const bodyless = req.body === null;
  const idempotent = IDEMPOTENT.has(req.method);
  const abandonable = bodyless && idempotent;
  const headers = upstreamHeaders(req.headers, headerOptions(f, o.proxyToken, bodyless));
  let ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, o.headersMs);
  // a client that goes away cancels the upstream request (and, later, its response body)
  const onAbort = () => ac.abort();
  req.signal.addEventListener("abort", onAbort, { once: true });

  let upstream = f.upstream;
  try {
    for (let attempt = 0; ; attempt++) {
      const tried = upstream;
      const tryAc = ac;
      if (abandonable) o.waiting.add(tried, tryAc);
      try {
        const res = await fetch(`http://${upstream}${f.target}`, {
          method: req.method,
          headers,
          body: req.body,
          redirect: "manual",
          decompress: false,
          signal: ac.signal,
        } as RequestInit);
        clearTimeout(timer);
        cleanResponseHeaders(res.headers, info.secure && route.tls !== "off");
        return res;
      } catch (e) {
        const gone = ac.signal.reason === GONE;
        if (attempt > 0 || timedOut || req.signal.aborted || !idempotent) throw e;
        if (!bodyless && !NOT_CONNECTED.has(errorCode(e))) throw e;
        const next = o.reroute(f.authority, f.path, upstream);
        if (next === null) throw e;
        o.log.debug("upstream failed, trying another replica", { upstream, next, error: gone ? "gone" : errorCode(e) });
        upstream = next;
        if (gone) ac = new AbortController();
      } finally {
        if (abandonable) o.waiting.delete(tried, tryAc);
      }
    }
  } catch (e) {
    clearTimeout(timer);
    req.signal.removeEventListener("abort", onAbort);
    if (timedOut) {
      o.log.warn("upstream sent no response headers in time", { app: route.app, upstream, ms: o.headersMs });
      return errorPage(504, "The app did not answer in time. Please try again.");
    }
    const fields = { app: route.app, upstream, error: errorCode(e) || (e as Error).message };
    if (req.signal.aborted) o.log.debug("client went away before the upstream answered", fields);
    else o.log.warn("upstream request failed", fields);
    return errorPage(502, "The app could not be reached. Please try again in a moment.");
  }
}
