/**
 * The proxy's listeners: TLS with SNI on listen_addr (plain HTTP when tls is off) and the plain listener on
 * http_listen_addr. `server.reload()` ignores `tls`, so a certificate change starts a fresh listener on the same port
 * (SO_REUSEPORT) and stops the old one gracefully; pending TLS-ALPN-01 challenges open the ALPN window.
 */
import { readFileSync } from "node:fs";
import type { Server } from "bun";
import { type CidrSet, clientIp, normalizeIp } from "../lib/net";
import type { Log } from "../log/logger";
import { errorText } from "./certs/acme";
import type { HeaderList } from "./h1/framing";
import { type RawServer, serveRaw } from "./h1/server";
import { type AlpnFront, openAlpnFront } from "./listeners-alpn";
import { plainAnswers } from "./listeners-plain";
import type { CertSource, ConnInfo, ProxyHandler, TlsMode } from "./types";

/** Idle connections close after this many seconds, as on the management server. */
const IDLE_TIMEOUT_S = 120;
/** The handler streams bodies; this only sets Bun's own cap out of the way. */
const MAX_BODY = Number.MAX_SAFE_INTEGER;

export interface ListenerConfig {
  listenAddr: string;
  /** Empty disables the plain listener. */
  httpListenAddr: string;
  mode: TlsMode;
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
}

export interface Listeners {
  /** Bound ports: `main` is listen_addr's, `plain` the plain listener's (null when disabled). */
  ports(): { main: number; plain: number | null };
  /** Where this process reaches the TLS listener (for the ALPN self-check). */
  probe(): { host: string; port: number };
  /** plain: tls off; tls: Bun.serve with SNI; alpn-window: the node:net front relaying to an internal listener. */
  state(): "plain" | "tls" | "alpn-window";
  /** Resolves once every certificate change seen so far is applied. */
  settled(): Promise<void>;
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

/**
 * Whether Linux resets, rather than hands over, the connections queued on a SO_REUSEPORT listener that closes
 * (net.ipv4.tcp_migrate_req, Linux 5.14+). Measured: with it off, a swap under 20 clients opening a new connection per
 * request reset about 4 of them; with it on, none.
 */
function migrationOff(): boolean {
  try {
    return readFileSync("/proc/sys/net/ipv4/tcp_migrate_req", "utf8").trim() === "0";
  } catch {
    return false;
  }
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
  // relay local port -> client address, for requests arriving through the ALPN front
  const relayed = new Map<number, string>();

  /** The client behind peer `addr`, resolved through X-Forwarded-For when the peer is a trusted proxy. */
  const peerInfo = (addr: string, forwardedFor: () => string | null, secure: boolean): ConnInfo => {
    if (!opts.trusted || opts.trusted.size === 0) return { clientIp: normalizeIp(addr), secure };
    const ip = clientIp(addr, forwardedFor(), opts.trusted);
    return { clientIp: ip, secure, trustForwarded: opts.trusted.has(addr) };
  };
  const info = (server: Server<unknown>, req: Request, secure: boolean, viaRelay = false): ConnInfo => {
    const peer = server.requestIP(req);
    let addr = peer?.address ?? "";
    if (viaRelay && peer) addr = relayed.get(peer.port) ?? addr;
    return peerInfo(addr, () => req.headers.get("x-forwarded-for"), secure);
  };
  // the raw engine (plain listeners) sees the peer address and the parsed headers
  const rawInfo = (peer: string, headers: HeaderList): ConnInfo => peerInfo(peer, () => headers.get("x-forwarded-for"), false);
  const error = (e: Error) => {
    log.error("proxy request failed", { error: errorText(e) });
    return new Response("Internal Server Error", { status: 500, headers: { "content-type": "text/plain; charset=utf-8" } });
  };
  const common = {
    idleTimeout: IDLE_TIMEOUT_S,
    maxRequestBodySize: MAX_BODY,
    development: false,
    websocket: handler.websocket,
    error,
  };

  if (config.mode === "off") {
    const server = serveRaw({ hostname: main.hostname, port: main.port, core: handler.core, info: rawInfo, log });
    return {
      ports: () => ({ main: server.port, plain: null }),
      probe: () => ({ host: dialHost(main.hostname), port: server.port }),
      state: () => "plain",
      settled: async () => {},
      stop: (closeActive) => server.stop(closeActive),
    };
  }

  const tlsConfig = () => {
    const fb = certs.fallback();
    const seen = new Set<string>();
    const sni = certs.sni().filter((e) => e.serverName && !seen.has(e.serverName) && seen.add(e.serverName));
    const tls = [{ key: fb.key, cert: fb.cert }, ...sni.map((e) => ({ serverName: e.serverName, key: e.key, cert: e.cert }))];
    const key = tls.map((t) => `${"serverName" in t ? t.serverName : ""}\n${t.cert}`).join("\n");
    return { tls, key };
  };
  const serveTls = (hostname: string, port: number, viaRelay: boolean) => {
    const { tls, key } = tlsConfig();
    const server = Bun.serve({
      ...common,
      hostname,
      port,
      reusePort: !viaRelay,
      tls,
      fetch: (req, srv) => handler.fetch(req, srv, info(srv, req, true, viaRelay)),
    });
    return { server, key };
  };

  // retired listeners still finishing their in-flight requests, and every ALPN front opened (closing is idempotent)
  const draining = new Set<Server<unknown>>();
  const fronts = new Set<AlpnFront>();
  const retire = (server: Server<unknown>, after: Promise<void> = Promise.resolve()) => {
    draining.add(server);
    void after
      .then(() => server.stop())
      .catch((e) => log.warn("listener stop failed", { error: errorText(e) }))
      .finally(() => draining.delete(server));
  };

  const first = serveTls(main.hostname, main.port, false);
  const port = first.server.port!;
  let direct: Server<unknown> | null = first.server;
  let windowed: { front: AlpnFront; internal: Server<unknown> } | null = null;
  let appliedKey = first.key;

  const apply = async () => {
    const wantWindow = certs.alpnChallenges().length > 0;
    const { key } = tlsConfig();
    if (!wantWindow && windowed) {
      const next = serveTls(main.hostname, port, false);
      const old = windowed;
      direct = next.server;
      appliedKey = next.key;
      windowed = null;
      old.front.close();
      // connections accepted but not yet routed still go to the internal listener, which stops once none is relayed
      const released = old.front.routed().then(() => old.front.released(old.internal.port!));
      retire(old.internal, released);
      void released.then(() => fronts.delete(old.front));
      log.info("alpn window closed");
    } else if (!wantWindow && key !== appliedKey) {
      const next = serveTls(main.hostname, port, false);
      const old = direct!;
      direct = next.server;
      appliedKey = next.key;
      retire(old);
      log.info("tls listener restarted with new certificates", { hosts: certs.sni().length });
    } else if (wantWindow && !windowed) {
      const internal = serveTls("127.0.0.1", 0, true);
      // the front reads the internal listener through this object, which outlives the window for late connections
      const win = { internal: internal.server } as { front: AlpnFront; internal: Server<unknown> };
      try {
        win.front = await openAlpnFront({
          hostname: main.hostname,
          port,
          challenges: () => certs.alpnChallenges(),
          target: () => win.internal.port!,
          clients: relayed,
          fallback: certs.fallback(),
          log,
        });
      } catch (e) {
        internal.server.stop(true);
        throw e;
      }
      windowed = win;
      fronts.add(win.front);
      appliedKey = internal.key;
      retire(direct!);
      direct = null;
      log.info("alpn window opened", { challenges: certs.alpnChallenges().length });
    } else if (wantWindow && windowed && key !== appliedKey) {
      const next = serveTls("127.0.0.1", 0, true);
      const old = windowed.internal;
      windowed.internal = next.server;
      appliedKey = next.key;
      retire(old, windowed.front.released(old.port!));
    }
  };

  let chain: Promise<void> = Promise.resolve();
  let queued = false;
  let stopped = false;
  const kick = () => {
    if (queued || stopped) return;
    queued = true;
    chain = chain
      .then(() => {
        queued = false;
        if (!stopped) return apply();
      })
      .catch((e) => log.error("listener update failed", { error: errorText(e) }));
  };
  const unsubscribe = certs.onChange(kick);
  if (certs.alpnChallenges().length > 0) kick();

  let plain: RawServer | null = null;
  if (config.httpListenAddr) {
    const addr = parseListenAddr(config.httpListenAddr);
    plain = serveRaw({
      hostname: addr.hostname,
      port: addr.port,
      core: handler.core,
      info: rawInfo,
      early: plainAnswers({ certs, httpsPort: () => port, plainHost: opts.plainHost }),
      log,
    });
  }
  if (migrationOff()) {
    log.info(
      "certificate changes restart the tls listener; set sysctl net.ipv4.tcp_migrate_req=1 so connections waiting to be accepted move to the new listener instead of being reset",
    );
  }
  log.info("proxy listening", { tls: `${main.hostname}:${port}`, plain: plain ? `${plain.hostname}:${plain.port}` : "off" });

  return {
    ports: () => ({ main: port, plain: plain?.port ?? null }),
    probe: () => ({ host: dialHost(main.hostname), port }),
    state: () => (windowed ? "alpn-window" : "tls"),
    async settled() {
      // a change notification is delivered in a microtask; let it arrive before looking at the chain
      await new Promise((r) => setImmediate(r));
      let seen: Promise<void>;
      do {
        seen = chain;
        await seen;
      } while (seen !== chain);
    },
    async stop(closeActive = false) {
      stopped = true;
      unsubscribe();
      await chain;
      for (const f of fronts) {
        if (closeActive) f.destroy();
        else f.close();
      }
      const servers = [...draining, direct, windowed?.internal].filter((s): s is Server<unknown> => !!s);
      await Promise.all([...servers.map((s) => s.stop(closeActive)), plain?.stop(closeActive)]);
    },
  };
}
