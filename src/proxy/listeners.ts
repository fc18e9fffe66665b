/**
 * The proxy's listeners, all on the raw HTTP/1.1 engine (src/proxy/h1): TLS with SNI on listen_addr (plain HTTP when
 * tls is off) and the plain listener on http_listen_addr. Certificates are looked up per handshake, so a certificate
 * change or a TLS-ALPN-01 challenge takes effect on the next handshake without a new listener.
 */
import { type CidrSet, clientIp, normalizeIp } from "../lib/net";
import type { Log } from "../log/logger";
import { ConnectionCaps } from "./h1/caps";
import { type EngineLimits, engineLimits } from "./h1/limits";
import { RawEngine, type RawServer, serveRaw } from "./h1/server";
import { H2Terminator } from "./h2/terminator";
import type { HeaderSource } from "./headers";
import { plainAnswers } from "./listeners-plain";
import { openTlsFront, SniContexts } from "./listeners-tls";
import type { CertSource, ConnInfo, ProxyHandler, TlsMode } from "./types";

export interface ListenerConfig {
  listenAddr: string;
  /** Empty disables the plain listener. */
  httpListenAddr: string;
  mode: TlsMode;
  /** Offer HTTP/2 (ALPN `h2`) on the TLS listener (`proxy.http2`). */
  http2?: boolean;
}

export interface ListenerOptions {
  config: ListenerConfig;
  handler: ProxyHandler;
  certs: CertSource;
  log: Log;
  /** Proxies whose X-Forwarded-For is believed. */
  trusted?: CidrSet;
  /** Hosts the plain listener serves through the handler instead of redirecting (their TLS is off). */
  plainHost?: (host: string) => boolean;
  /** The engine's connection caps, head limits and timeouts (defaults in h1/limits.ts). */
  limits?: Partial<EngineLimits>;
}

export interface Listeners {
  /** Bound ports: `main` is listen_addr's, `plain` the plain listener's (null when disabled). */
  ports(): { main: number; plain: number | null };
  /** Where this process reaches the TLS listener (for the ALPN self-check). */
  probe(): { host: string; port: number };
  /** plain: tls off; tls: TLS with SNI. */
  state(): "plain" | "tls";
  /** Client connections open now (TLS handshakes included) and refused by the caps since start. */
  connections(): { open: number; refused: number };
  /** Resolves once every certificate change seen so far is applied. */
  settled(): Promise<void>;
  /** Exchanges and tunnels in progress to these replicas (a rolling deploy drains them). */
  upstreamBusy(addrs: ReadonlySet<string>): number;
  /** Close idle pooled connections to these replicas. */
  dropIdle(addrs: ReadonlySet<string>): void;
  /** These replicas leave now: their WebSocket tunnels get a clean close (1001 going away). */
  closeTunnels(addrs: ReadonlySet<string>): number;
  /** Stop everything; graceful (in-flight requests finish) unless `closeActive`. */
  stop(closeActive?: boolean): Promise<void>;
}

/** `:443`, `127.0.0.1:8443`, `[::1]:443`, `*:80` -> the hostname Bun binds and the port. */
export function parseListenAddr(addr: string): { hostname: string; port: number } {
  const i = addr.lastIndexOf(":");
  if (i < 0) throw new Error(`invalid listen address: ${addr}`);
  let host = addr.slice(0, i);
  const port = Number(addr.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port in listen address: ${addr}`);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host === "" || host === "*") host = "0.0.0.0";
  return { hostname: host, port };
}

/** The address to dial to reach a listener bound to `hostname`. */
function dialHost(hostname: string): string {
  if (hostname === "0.0.0.0") return "127.0.0.1";
  if (hostname === "::") return "::1";
  return hostname;
}

/** Start the listeners for `config`. */
export async function startListeners(opts: ListenerOptions): Promise<Listeners> {
  const { config, handler, certs, log } = opts;
  const main = parseListenAddr(config.listenAddr);

  /** The client behind peer `addr`, resolved through X-Forwarded-For when the peer is a trusted proxy. */
  const info = (addr: string, headers: HeaderSource, secure: boolean): ConnInfo => {
    if (!opts.trusted || opts.trusted.size === 0) return { clientIp: normalizeIp(addr), secure };
    const ip = clientIp(addr, headers.get("x-forwarded-for"), opts.trusted);
    return { clientIp: ip, secure, trustForwarded: opts.trusted.has(addr) };
  };
  const limits = engineLimits(opts.limits);
  // one set of connection caps for every listener; trusted proxies carry many clients and skip the per-address cap
  const caps = new ConnectionCaps({
    maxConnections: limits.maxConnections,
    maxConnectionsPerIp: limits.maxConnectionsPerIp,
    exempt: (peer) => opts.trusted?.has(peer) ?? false,
    log,
  });
  const engineOptions = { core: handler.core, info, log, limits, caps };

  if (config.mode === "off") {
    const server = serveRaw({ hostname: main.hostname, port: main.port, ...engineOptions });
    return {
      ports: () => ({ main: server.port, plain: null }),
      probe: () => ({ host: dialHost(main.hostname), port: server.port }),
      state: () => "plain",
      connections: () => ({ open: caps.size, refused: caps.refusedTotal }),
      settled: async () => {},
      upstreamBusy: (addrs) => server.pool.busy(addrs),
      dropIdle: (addrs) => server.pool.dropIdle(addrs),
      closeTunnels: (addrs) => server.pool.goAway(addrs),
      stop: (closeActive) => server.stop(closeActive),
    };
  }

  const contexts = new SniContexts(certs, log);
  const unsubscribe = certs.onChange(() => contexts.refresh());
  const engine = new RawEngine(engineOptions);
  const h2 = config.http2 ? new H2Terminator({ core: handler.core, info, pool: engine.pool, limits: engine.limits, log }) : null;
  let front: Awaited<ReturnType<typeof openTlsFront>>;
  try {
    front = await openTlsFront({ hostname: main.hostname, port: main.port, contexts, engine, h2, log });
  } catch (e) {
    unsubscribe();
    void h2?.stop(true);
    throw e;
  }
  const port = front.port;

  let plain: RawServer | null = null;
  if (config.httpListenAddr) {
    const addr = parseListenAddr(config.httpListenAddr);
    try {
      plain = serveRaw({
        hostname: addr.hostname,
        port: addr.port,
        ...engineOptions,
        early: plainAnswers({ certs, httpsPort: () => port, plainHost: opts.plainHost }),
      });
    } catch (e) {
      unsubscribe();
      front.close();
      void h2?.stop(true);
      throw e;
    }
  }
  log.info("proxy listening", { tls: `${main.hostname}:${port}`, plain: plain ? `${plain.hostname}:${plain.port}` : "off" });

  return {
    ports: () => ({ main: port, plain: plain?.port ?? null }),
    probe: () => ({ host: dialHost(main.hostname), port }),
    state: () => "tls",
    connections: () => ({ open: caps.size, refused: caps.refusedTotal }),
    upstreamBusy: (addrs) => engine.pool.busy(addrs) + (plain?.pool.busy(addrs) ?? 0),
    dropIdle: (addrs) => {
      engine.pool.dropIdle(addrs);
      plain?.pool.dropIdle(addrs);
    },
    closeTunnels: (addrs) => engine.pool.goAway(addrs) + (plain?.pool.goAway(addrs) ?? 0),
    async settled() {
      // a change notification is delivered in a microtask and applied at once
      await new Promise((r) => setImmediate(r));
    },
    async stop(closeActive = false) {
      unsubscribe();
      front.close();
      await Promise.all([engine.stop(closeActive), plain?.stop(closeActive), h2?.stop(closeActive)]);
    },
  };
}
