/**
 * A plain (tls off) proxy on the real listener for engine tests: apps by host name routed to fixed upstream addresses,
 * no rate limit, short timeouts unless given; and the status a framing check refuses with, for parser tests.
 */
import type { Endpoint } from "../../src/compose/model";
import { LogSink } from "../../src/log/logger";
import { RequestStats } from "../../src/modules/metrics/aggregator";
import { FramingError } from "../../src/proxy/h1/framing";
import type { EngineLimits } from "../../src/proxy/h1/limits";
import { createProxyHandler, type ProxyTimeouts } from "../../src/proxy/handler";
import { type Listeners, startListeners } from "../../src/proxy/listeners";
import { buildRouteTable } from "../../src/proxy/route-table";

/** A certificate source for tls off: nothing to serve. */
export const NO_CERTS = {
  sni: () => [],
  fallback: () => ({ serverName: "", key: "", cert: "" }),
  onChange: () => () => {},
  http01: () => null,
  alpnChallenges: () => [],
};

/** Start a plain listener routing each app's hosts to its upstream (`host:port`). */
export function plainProxy(o: {
  apps: Array<{ slug: string; hosts: string[]; upstream: string }>;
  limits?: Partial<EngineLimits>;
  timeouts?: ProxyTimeouts;
}): Promise<Listeners> {
  const log = new LogSink({ stdout: false }).logger("proxy");
  const apps = o.apps.map((a) => {
    const endpoints: Endpoint[] = [{ service: "web", port: 1, path: "/", tls: null, hosts: a.hosts }];
    return { slug: a.slug, endpoints, labels: { endpoints, ratelimit: null, allow: null, registries: null }, stopped: false };
  });
  const byApp = new Map(o.apps.map((a) => [a.slug, a.upstream]));
  const table = buildRouteTable({
    apps,
    upstreams: (slug) => [byApp.get(slug)!],
    defaults: { ratelimit: { requests: 1e9, windowMs: 60_000, burst: 1e9, by: "ip" }, tls: "off" },
  });
  const handler = createProxyHandler({
    table: () => table,
    stats: new RequestStats(),
    log,
    proxyToken: "t",
    timeouts: o.timeouts ?? { headersMs: 2000, wsConnectMs: 2000 },
  });
  return startListeners({
    config: { listenAddr: "127.0.0.1:0", httpListenAddr: "", mode: "off" },
    handler,
    certs: NO_CERTS,
    log,
    limits: o.limits,
  });
}

/** The status of the FramingError `fn` throws, or null when it accepts; any other error is rethrown. */
export function framingStatus(fn: () => unknown): number | null {
  try {
    fn();
    return null;
  } catch (e) {
    if (e instanceof FramingError) return e.status;
    throw e;
  }
}
