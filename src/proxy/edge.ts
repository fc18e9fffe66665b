/**
 * The reverse proxy as the server runs it: the route table built from the apps' labels and live replicas (rebuilt
 * whenever the status board changes, swapped whole), certificates for its hosts, the listeners, and request stats
 * flushed into the metrics tiers every 10 s, off the request path.
 */
import { readFileSync } from "node:fs";
import { type Config, effectiveHttpListenAddr } from "../config/schema";
import type { Ctx } from "../context";
import { boardUpstreams } from "../docker/replicas";
import { parseDuration } from "../lib/duration";
import { stopWithin } from "../lib/time";
import type { RequestStats } from "../modules/metrics/aggregator";
import type { RequestStatsStore } from "../modules/metrics/request-stats";
import { type CertManager, challengeOrder, createCertManager } from "./certs/manager";
import { createCertStore } from "./certs/store";
import type { EngineLimits } from "./h1/limits";
import { createProxyHandler, type ProxyTimeouts } from "./handler";
import { type Listeners, startListeners } from "./listeners";
import { buildRouteTable, type RouteTable } from "./route-table";
import type { TlsMode } from "./types";

const FLUSH_EVERY_MS = 10_000;
const PRUNE_EVERY_MS = 10 * 60_000;

/** The proxy's parts, filled at server start. */
export interface Edge {
  stats: RequestStats;
  statsStore: RequestStatsStore;
  certs: CertManager | null;
  listeners: Listeners | null;
  table: RouteTable | null;
  /** Store the finished stats buckets now (and the current ones with `all`). */
  flush(all?: boolean): void;
}

/** The route table's defaults from the configuration: the global rate limit and TLS mode. */
export function routeDefaults(c: Config, mode: TlsMode) {
  return {
    ratelimit: {
      requests: c.ratelimit.requests,
      windowMs: parseDuration(c.ratelimit.window)!,
      burst: c.ratelimit.burst,
      by: c.ratelimit.by,
    },
    tls: mode,
  };
}

/** The engine's limits and the upstream timeouts from the `proxy` block. */
export function proxyLimits(c: Config): { limits: Partial<EngineLimits>; timeouts: ProxyTimeouts } {
  const p = c.proxy;
  const ms = (d: string) => parseDuration(d)!;
  return {
    limits: {
      maxConnections: p.max_connections,
      maxConnectionsPerIp: p.max_connections_per_ip,
      maxHeaderBytes: p.max_header_bytes,
      maxHeaders: p.max_headers,
      headerTimeoutMs: ms(p.header_timeout),
      idleTimeoutMs: ms(p.idle_timeout),
      bodyTimeoutMs: ms(p.body_timeout),
      sendTimeoutMs: ms(p.send_timeout),
      upstreamBodyTimeoutMs: ms(p.upstream_body_timeout),
      upstreamIdleMs: ms(p.upstream_idle_timeout),
    },
    timeouts: { headersMs: ms(p.upstream_header_timeout), wsConnectMs: ms(p.websocket_connect_timeout) },
  };
}

/** Start the proxy; returns its stop function (in-flight requests get `graceMs` to finish). */
export async function startEdge(ctx: Ctx, o: { managementPort: number }): Promise<(graceMs: number) => Promise<void>> {
  const c = ctx.config;
  const log = ctx.logs.logger("proxy");
  const mode = c.tls.mode;
  const httpListenAddr = effectiveHttpListenAddr(c);
  let listeners: Listeners | null = null;

  const certs = await createCertManager({
    store: createCertStore(c.data_dir),
    log: ctx.logs.logger("certs"),
    clock: ctx.clock,
    mode,
    email: c.tls.email,
    directoryUrl: c.tls.acme_directory || undefined,
    caTrust: c.tls.acme_ca_file ? readFileSync(c.tls.acme_ca_file, "utf8") : undefined,
    challenges: challengeOrder(httpListenAddr),
    tlsProbe: () => listeners?.probe() ?? null,
  });
  ctx.edge.certs = certs;

  let table: RouteTable | null = null;
  const { limits, timeouts } = proxyLimits(c);
  const handler = createProxyHandler({
    table: () => table!,
    stats: ctx.edge.stats,
    log,
    proxyToken: ctx.proxyToken,
    clock: ctx.clock,
    timeouts,
  });
  const upstreams = boardUpstreams(ctx.status);
  const defaults = routeDefaults(c, mode);
  let hostsKey = "";

  /** Build and swap in the table; hand its hosts to certificate management when they changed. */
  const rebuild = () => {
    const apps = [];
    for (const a of ctx.appRepo.list()) {
      if (a.removedAt) continue;
      const r = ctx.appViews.routing(a);
      if (r?.endpoints.length) apps.push({ slug: a.slug, endpoints: r.endpoints, labels: r.labels, stopped: a.stopped });
    }
    const next = buildRouteTable({
      apps,
      upstreams,
      management: c.domain ? { hosts: [c.domain], upstream: `127.0.0.1:${o.managementPort}` } : undefined,
      defaults,
    });
    table = next;
    ctx.edge.table = next;
    handler.tableChanged();
    for (const conflict of next.conflicts)
      log.warn("host claimed by more than one app; the first claim wins", { route: conflict });
    const hosts = next
      .hostTls()
      .map((h) => ({ host: h.host, tls: h.tls ?? mode, app: next.lookup(h.host.replace(/^\*\./, "x."), "/")?.app ?? undefined }));
    const key = JSON.stringify(hosts);
    if (key !== hostsKey) {
      hostsKey = key;
      certs.setHosts(hosts).catch((e) => log.error("certificate update failed", { error: (e as Error).message }));
    }
  };
  let queued = false;
  const schedule = () => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      try {
        rebuild();
      } catch (e) {
        log.error("route table rebuild failed", { error: (e as Error).message });
      }
    });
  };
  rebuild();
  const unsubscribe = ctx.status.onChange(schedule);

  listeners = await startListeners({
    config: { listenAddr: c.listen_addr, httpListenAddr, mode },
    handler,
    certs,
    log,
    trusted: ctx.trusted,
    plainHost: (h) => certs.isPlain(h),
    limits,
  });
  const ports = listeners.ports();
  ctx.edge.listeners = listeners;
  log.info(`proxy listening on ${c.listen_addr}${mode === "off" ? " (http)" : " (https)"}`, {
    port: ports.main,
    http_port: ports.plain ?? undefined,
    tls_mode: mode,
  });

  const flushTimer = setInterval(() => ctx.edge.flush(), FLUSH_EVERY_MS);
  const pruneTimer = setInterval(() => ctx.edge.statsStore.prune(), PRUNE_EVERY_MS);
  flushTimer.unref?.();
  pruneTimer.unref?.();

  return async (graceMs) => {
    unsubscribe();
    clearInterval(flushTimer);
    clearInterval(pruneTimer);
    const l = listeners;
    if (l) await stopWithin((force) => l.stop(force), graceMs);
    certs.stop();
    ctx.edge.flush(true);
  };
}
