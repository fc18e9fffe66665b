/**
 * The reverse proxy as the server runs it, wired to the rest of the app: the route table built from the apps' labels
 * and live replicas (rebuilt whenever the status board changes, swapped whole), certificates for its hosts, the
 * listeners, and request stats flushed into the metrics tiers every 10 s, off the request path.
 */
import { readFileSync } from "node:fs";
import { type Config, effectiveHttpListenAddr } from "./config/schema";
import { PUBLIC_NETWORK } from "./docker/naming";
import { boardUpstreams } from "./docker/replicas";
import type { ContainerSummary } from "./docker/types";
import { startTrace } from "./lib/debug-memory";
import { parseDuration } from "./lib/duration";
import type { CidrSet } from "./lib/net";
import { type Clock, stopWithin } from "./lib/time";
import type { LogSink } from "./log/logger";
import type { AppRepo } from "./modules/apps/repo";
import type { AppViews } from "./modules/apps/view";
import type { RequestStats } from "./modules/metrics/aggregator";
import type { RequestStatsStore } from "./modules/metrics/request-stats";
import type { RequestTotals } from "./modules/metrics/totals";
import { type CertManager, challengeOrder, createCertManager } from "./proxy/certs/manager";
import { createCertStore } from "./proxy/certs/store";
import type { EngineLimits } from "./proxy/h1/limits";
import { createProxyHandler, type ProxyTimeouts } from "./proxy/handler";
import { type Listeners, startListeners } from "./proxy/listeners";
import type { TrafficPins } from "./proxy/pins";
import { buildRouteTable, type RouteTable } from "./proxy/route-table";
import type { TlsMode } from "./proxy/types";

const FLUSH_EVERY_MS = 10_000;
const NONE: ReadonlySet<string> = new Set();
const PRUNE_EVERY_MS = 10 * 60_000;

/** What the edge is built from; `createContext` hands these over. */
export interface EdgeDeps {
  config: Readonly<Config>;
  logs: LogSink;
  clock: Clock;
  /** Peers whose forwarded-for headers are believed. */
  trusted: CidrSet;
  /** Sent to the management server only, which then believes X-Forwarded-*. */
  proxyToken: string;
  /** The apps to route (read on every rebuild). */
  apps: Pick<AppRepo, "list">;
  views: Pick<AppViews, "routing">;
  /** Live containers per app, and a signal when they change. */
  status: { containers(slug: string): ContainerSummary[]; onChange(fn: () => void): () => void };
  /** Where the proxy counts requests, in memory. */
  stats: RequestStats;
  /** Where the counted requests are stored, off the request path. */
  statsStore: RequestStatsStore;
  /** Rolling deploys' choice of which containers take traffic. */
  pins?: TrafficPins;
}

/** The proxy's parts, built complete; `start` makes them listen. */
export interface Edge {
  /**
   * Build the route table, start certificate management and listen. `managementPort` is read at each rebuild: the
   * server starts the proxy before its API listens (a port 0 is only known after), then calls `refresh`.
   */
  start(o: { managementPort: () => number }): Promise<void>;
  /** Rebuild the route table soon (nothing happens before `start`). */
  refresh(): void;
  /** Stop listening (in-flight requests get `graceMs` to finish) and store the last request stats. */
  stop(graceMs: number): Promise<void>;
  /** Store the finished stats buckets now (and the current ones with `all`). */
  flush(all?: boolean): void;
  /** Certificate management, null until started. */
  certs(): CertManager | null;
  /** The listeners, null until started. */
  listeners(): Listeners | null;
  /** The route table in use, null until started. */
  table(): RouteTable | null;
  /** Requests counted per app since the process started (the Prometheus exposition reads them). */
  totals(): RequestTotals;
  /** Exchanges and WebSocket tunnels in progress to these replicas (`ip:port`); 0 before `start`. */
  upstreamBusy(addrs: ReadonlySet<string>): number;
  /** Close idle pooled connections to these replicas. */
  dropIdle(addrs: ReadonlySet<string>): void;
  /** Close the WebSocket tunnels to these replicas cleanly (they are leaving); how many there were. */
  closeTunnels(addrs: ReadonlySet<string>): number;
  /** Resolves once the route table reflects every change seen so far (a rebuild is scheduled in a microtask). */
  routesSettled(): Promise<void>;
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

/** Build the edge; nothing listens until `start`. */
export function createEdge(d: EdgeDeps): Edge {
  const c = d.config;
  const log = d.logs.logger("proxy");
  const mode = c.tls.mode;
  const httpListenAddr = effectiveHttpListenAddr(c);
  let certs: CertManager | null = null;
  let listeners: Listeners | null = null;
  let table: RouteTable | null = null;
  /** What `stop` undoes, in order: set while running. */
  let running: { unsubscribe: () => void; timers: ReturnType<typeof setInterval>[] } | null = null;

  const flush = (all = false) => {
    try {
      // the store merges into existing buckets, so flushing an unfinished one early loses nothing
      d.statsStore.store(d.stats.drain({ all }));
    } catch (e) {
      log.error("storing request stats failed", { error: (e as Error).message });
    }
  };

  let refresh = () => {};

  async function start(o: { managementPort: () => number }): Promise<void> {
    const trace = startTrace();
    const cm = await createCertManager({
      store: createCertStore(c.data_dir),
      log: d.logs.logger("certs"),
      clock: d.clock,
      mode,
      email: c.tls.email,
      directoryUrl: c.tls.acme_directory || undefined,
      caTrust: c.tls.acme_ca_file ? readFileSync(c.tls.acme_ca_file, "utf8") : undefined,
      challenges: challengeOrder(httpListenAddr),
      tlsProbe: () => listeners?.probe() ?? null,
    });
    certs = cm;
    trace.mark("certs_ready");

    const { limits, timeouts } = proxyLimits(c);
    const handler = createProxyHandler({
      table: () => table!,
      stats: d.stats,
      log,
      proxyToken: d.proxyToken,
      clock: d.clock,
      timeouts,
      draining: () => d.pins?.draining() ?? NONE,
    });
    const upstreams = boardUpstreams(d.status, PUBLIC_NETWORK, d.pins);
    const defaults = routeDefaults(c, mode);
    let hostsKey = "";

    /** Build and swap in the table; hand its hosts to certificate management when they changed. */
    const rebuild = () => {
      const apps = [];
      for (const a of d.apps.list()) {
        if (a.removedAt) continue;
        const r = d.views.routing(a);
        if (r?.endpoints.length) apps.push({ slug: a.slug, endpoints: r.endpoints, labels: r.labels, stopped: a.stopped });
      }
      const next = buildRouteTable({
        apps,
        upstreams,
        management: c.domain ? { hosts: [c.domain], upstream: `127.0.0.1:${o.managementPort()}` } : undefined,
        defaults,
      });
      table = next;
      handler.tableChanged();
      for (const conflict of next.conflicts)
        log.warn("host claimed by more than one app; the first claim wins", { route: conflict });
      const hosts = next.hostTls().map((h) => ({
        host: h.host,
        tls: h.tls ?? mode,
        app: next.lookup(h.host.replace(/^\*\./, "x."), "/")?.app ?? undefined,
      }));
      const key = JSON.stringify(hosts);
      if (key !== hostsKey) {
        hostsKey = key;
        cm.setHosts(hosts).catch((e) => log.error("certificate update failed", { error: (e as Error).message }));
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
    trace.mark("routes_built");
    const offStatus = d.status.onChange(schedule);
    const offPins = d.pins?.onChange(schedule);
    const unsubscribe = () => {
      offStatus();
      offPins?.();
    };
    refresh = schedule;

    try {
      listeners = await startListeners({
        config: { listenAddr: c.listen_addr, httpListenAddr, mode, http2: c.proxy.http2 },
        handler,
        certs: cm,
        log,
        trusted: d.trusted,
        plainHost: (h) => cm.isPlain(h),
        limits,
      });
    } catch (e) {
      // the proxy cannot listen: nothing of it keeps running
      unsubscribe();
      cm.stop();
      throw e;
    }
    const ports = listeners.ports();
    log.info(`proxy listening on ${c.listen_addr}${mode === "off" ? " (http)" : " (https)"}`, {
      port: ports.main,
      http_port: ports.plain ?? undefined,
      tls_mode: mode,
    });

    const flushTimer = setInterval(() => flush(), FLUSH_EVERY_MS);
    const pruneTimer = setInterval(() => d.statsStore.prune(), PRUNE_EVERY_MS);
    flushTimer.unref?.();
    pruneTimer.unref?.();
    running = { unsubscribe, timers: [flushTimer, pruneTimer] };
  }

  async function stop(graceMs: number): Promise<void> {
    if (running !== null) {
      running.unsubscribe();
      for (const t of running.timers) clearInterval(t);
      running = null;
    }
    const l = listeners;
    if (l) await stopWithin((force) => l.stop(force), graceMs);
    certs?.stop();
    flush(true);
  }

  return {
    start,
    stop,
    flush,
    refresh: () => refresh(),
    certs: () => certs,
    listeners: () => listeners,
    table: () => table,
    totals: () => d.stats.totals,
    upstreamBusy: (addrs) => listeners?.upstreamBusy(addrs) ?? 0,
    dropIdle: (addrs) => listeners?.dropIdle(addrs),
    closeTunnels: (addrs) => listeners?.closeTunnels(addrs) ?? 0,
    // the rebuild runs in a microtask queued by the change: one macrotask later it has run
    routesSettled: () => new Promise((r) => setTimeout(r, 0)),
  };
}
