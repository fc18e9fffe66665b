/**
 * The proxy's decisions: route lookup, allowlist, rate limit and the replica to forward to, with every app request
 * counted in the stats sink. The raw engine (src/proxy/h1) does the forwarding. Nothing here touches SQLite or spawns
 * a process; the route table is read through a function so a rebuilt one takes effect on the next request.
 */
import { normalizeIp } from "../lib/net";
import type { Clock } from "../lib/time";
import { systemClock } from "../lib/time";
import type { Log } from "../log/logger";
import { type ForwardRequest, WaitingAttempts } from "./attempts";
import { type HeaderSource, HSTS_VALUE } from "./headers";
import { errorAnswer, type LocalAnswer } from "./pages";
import { AppLimiters, rateKey } from "./ratelimit";
import type { Route, RouteTable } from "./route-table";
import type { ConnInfo, ProxyHandler, StatsSink } from "./types";
import { nextUpstream, otherUpstream } from "./upstreams";

export interface ProxyTimeouts {
  /** Most ms to wait for an upstream's response headers (60 s); then 504. */
  headersMs?: number;
  /** Most ms to wait for an upstream WebSocket handshake (10 s). */
  wsConnectMs?: number;
}

export interface ProxyHandlerOptions {
  /** The current route table (swapped whole by the reconciler). */
  table: () => RouteTable;
  stats: StatsSink;
  log: Log;
  /** Per-process secret sent as X-Sundeck-Proxy to the management server only. */
  proxyToken: string;
  clock?: Clock;
  timeouts?: ProxyTimeouts;
  /** Most rate-limit keys held per app (20 000). */
  rateLimitKeys?: number;
  /**
   * Replicas out of the table that still run and finish what they were given (a rolling deploy drains them): the
   * attempts waiting on them are not abandoned.
   */
  draining?: () => ReadonlySet<string>;
}

/** Seconds a client is told to wait when an app has no replica to serve it. */
const RETRY_UNAVAILABLE = "5";

/** IPv4 clients of a dual-stack listener arrive as ::ffff:a.b.c.d; allowlists, limits and headers want a.b.c.d. */
export function normalizeInfo(conn: ConnInfo): ConnInfo {
  return conn.clientIp.startsWith("::ffff:") ? { ...conn, clientIp: normalizeIp(conn.clientIp) } : conn;
}

/** A request that passed the checks and goes to `upstream`. */
export interface Admitted extends ForwardRequest {
  /** performance.now() at arrival. */
  t0: number;
}

/** What admission needs of a request, whichever engine parsed it. */
export interface RequestLine {
  method: string;
  /** Host and port the request addressed (absolute-form URL's authority, else the Host header), validated. */
  authority: string;
  /** Path without the query. */
  path: string;
  /** Path and query as sent upstream. */
  target: string;
  headers: HeaderSource;
}

/** The proxy's decisions and bookkeeping, as the raw engine (src/proxy/h1) uses them. */
export interface ProxyCore {
  /** Route, allowlist and rate limit: the answer to give now, or where to forward. */
  admit(r: RequestLine, info: ConnInfo, t0: number): { answer: LocalAnswer } | { forward: Admitted };
  /** Another replica for a request whose first one failed; null when there is none. */
  reroute(authority: string, path: string, failed: string): string | null;
  waiting: WaitingAttempts;
  /** Count an app response (status known) in the request stats. */
  record(a: Admitted, status: number, bytes?: number): void;
  /** Most ms to wait for response headers (then 504). */
  headersMs: number;
  /** Most ms to wait for an upstream's answer to a WebSocket upgrade (then 504). */
  wsConnectMs: number;
  proxyToken: string;
  log: Log;
}

/** The proxy handler, plus a hook for the code that swaps route tables. */
export interface ProxyRequestHandler extends ProxyHandler {
  core: ProxyCore;
  /**
   * Call after swapping in a new table: requests waiting on replicas it dropped move to others at once (otherwise
   * this happens on the next request).
   */
  tableChanged(): void;
}

/** Build the proxy's request handler. */
export function createProxyHandler(o: ProxyHandlerOptions): ProxyRequestHandler {
  const clock = o.clock ?? systemClock;
  const headersMs = o.timeouts?.headersMs ?? 60_000;
  const limiters = new AppLimiters(clock, o.rateLimitKeys);
  const wsConnectMs = o.timeouts?.wsConnectMs ?? 10_000;
  const waiting = new WaitingAttempts();
  let seen: RouteTable | null = null;

  /** Take in a new table: forget rate limiters of apps it dropped, give up on attempts to replicas it dropped. */
  function tableChanged(table: RouteTable): void {
    if (table === seen) return;
    seen = table;
    limiters.retain(table.apps);
    const live = new Set<string>();
    for (const r of table.routes) for (const u of r.upstreams) live.add(u);
    for (const u of o.draining?.() ?? []) live.add(u);
    const n = waiting.abandon(live);
    if (n > 0) o.log.debug("retrying requests waiting on replicas that left", { requests: n });
  }

  function reroute(authority: string, path: string, failed: string): string | null {
    const r = o.table().lookup(authority, path);
    if (r === null) return null;
    const u = nextUpstream(r);
    return u !== failed ? u : otherUpstream(r, failed);
  }

  /** An error page for an app request, counted in its stats. */
  const refuse = (
    route: Route,
    info: ConnInfo,
    path: string,
    t0: number,
    status: number,
    message: string,
    retryAfter?: string,
  ) => {
    const headers: Record<string, string> = {};
    if (retryAfter !== undefined) headers["retry-after"] = retryAfter;
    if (info.secure && route.tls !== "off") headers["strict-transport-security"] = HSTS_VALUE;
    if (route.app !== null) o.stats.record(route.app, { status, ms: performance.now() - t0, path });
    return { answer: errorAnswer(status, message, headers) };
  };

  function record(a: Admitted, status: number, bytes?: number): void {
    if (a.route.app !== null) o.stats.record(a.route.app, { status, ms: performance.now() - a.t0, path: a.path, bytes });
  }

  function admit(r: RequestLine, info: ConnInfo, t0: number): { answer: LocalAnswer } | { forward: Admitted } {
    const { authority, path } = r;
    const table = o.table();
    if (table !== seen) tableChanged(table);
    const route = table.lookup(authority, path);
    if (route === null) return { answer: errorAnswer(404, "No app is served at this address.") };
    if (route.app !== null) {
      if (route.allow !== null && !route.allow.has(info.clientIp)) {
        return refuse(route, info, path, t0, 403, "Your address is not allowed to reach this app.");
      }
      const rl = route.ratelimit;
      if (rl !== null) {
        const d = limiters.take(route.app, rl, rateKey(rl, r.headers, info.clientIp, path));
        if (!d.ok) {
          const wait = String(d.retryAfter);
          return refuse(route, info, path, t0, 429, "Too many requests. Please slow down and retry shortly.", wait);
        }
      }
    }
    const upstream = nextUpstream(route);
    if (upstream === null) {
      const message = route.stopped
        ? "This app is stopped."
        : "This app has no running instance right now. Please retry shortly.";
      return refuse(route, info, path, t0, 503, message, RETRY_UNAVAILABLE);
    }
    // the authority wins over a Host header (RFC 9112 3.2.2); the engine validated both
    return { forward: { route, upstream, target: r.target, host: authority, info, authority, path, t0 } };
  }

  const core: ProxyCore = { admit, reroute, waiting, record, headersMs, wsConnectMs, proxyToken: o.proxyToken, log: o.log };

  return { tableChanged: () => tableChanged(o.table()), core };
}
