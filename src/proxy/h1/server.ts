/**
 * The raw HTTP/1.1 engine of the proxy: client connections on Bun.listen (or node:tls sockets handed over by the TLS
 * front), upstream connections on Bun.connect, all on the event loop's thread, bytes passed through with backpressure
 * both ways. Not Bun.serve + fetch: a handler's response leaves with one send() per header fragment, and fetch hands
 * every response across Bun's HTTP thread (what that costs is in docs/proxy.md).
 *
 * The engine owns framing: it parses strictly (client.ts, framing.ts, body.ts, request-target.ts) and writes its own
 * Content-Length, Transfer-Encoding and Connection both ways (exchange.ts, response.ts). It caps client connections in
 * total and per address, and times out slow heads, slow bodies and idle connections (limits.ts). Routing, limits and
 * stats are the shared ProxyCore's (src/proxy/handler.ts).
 */

import type { TLSSocket } from "node:tls";
import type { Socket, TCPSocketListener } from "bun";
import type { Log } from "../../log/logger";
import type { ProxyCore } from "../handler";
import type { HeaderSource } from "../headers";
import type { LocalAnswer } from "../pages";
import type { ConnInfo } from "../types";
import { ConnectionCaps } from "./caps";
import { ClientConn } from "./client";
import { type EngineLimits, engineLimits } from "./limits";
import { BunLink, type ClientLink, TlsLink } from "./link";
import { UpstreamPool } from "./pool";

/** What the raw engine needs to know about a request before routing it (the plain listener's own answers). */
export interface EarlyRequest {
  method: string;
  /** Path and query as sent. */
  target: string;
  /** The validated authority (absolute-form target's, else Host), null when missing. */
  host: string | null;
}

export interface EngineOptions {
  core: ProxyCore;
  /** The client as the handler sees it, from the socket's peer address and the request's headers. */
  info(peer: string, headers: HeaderSource, secure: boolean): ConnInfo;
  /** Answer a request before routing (ACME challenges, redirects); null passes it to the proxy. */
  early?(r: EarlyRequest): LocalAnswer | null;
  /** Peers exempt from the per-address connection cap (trusted proxies carry many clients). */
  exempt?(peer: string): boolean;
  /** Caps shared with other listeners; by default the engine has its own, from `limits`. */
  caps?: ConnectionCaps;
  log: Log;
  /** Connection caps, head limits and timeouts; defaults in limits.ts. */
  limits?: Partial<EngineLimits>;
}

export interface RawServeOptions extends EngineOptions {
  hostname: string;
  port: number;
}

export interface RawServer {
  readonly hostname: string;
  readonly port: number;
  /** Its upstream connections. */
  readonly pool: UpstreamPool;
  /** Open client connections. */
  connections(): number;
  /** Stop accepting; graceful (exchanges in progress finish, idle connections close) unless `closeActive`. */
  stop(closeActive?: boolean): Promise<void>;
}

interface ClientData {
  conn: ClientConn | null;
  link: BunLink | null;
  /** The peer address counted against the caps (null: refused, not counted). */
  peer: string | null;
}

/** Said to a plain client refused by the connection caps before its request is read. */
const OVER_CAPACITY = Buffer.from(
  "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 5\r\n" +
    "content-length: 38\r\nconnection: close\r\n\r\nToo many connections. Retry shortly.\r\n",
  "latin1",
);

/** The connections of one listener (or of several: the TLS front hands over sockets after their handshake). */
export class RawEngine {
  readonly conns = new Set<ClientConn>();
  readonly limits: EngineLimits;
  readonly pool: UpstreamPool;
  stopping = false;
  /** Client connection caps (shared with the other listeners when given in the options). */
  readonly caps: ConnectionCaps;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly tickMs: number;

  constructor(readonly opts: EngineOptions) {
    this.limits = engineLimits(opts.limits);
    this.pool = new UpstreamPool({ idleMs: this.limits.upstreamIdleMs, maxIdle: this.limits.upstreamMaxIdle });
    this.caps =
      opts.caps ??
      new ConnectionCaps({
        maxConnections: this.limits.maxConnections,
        maxConnectionsPerIp: this.limits.maxConnectionsPerIp,
        exempt: opts.exempt,
        log: opts.log,
      });
    const shortest = Math.min(
      opts.core.headersMs,
      opts.core.wsConnectMs,
      this.limits.headerTimeoutMs,
      this.limits.bodyTimeoutMs,
      this.limits.sendTimeoutMs,
      this.limits.upstreamBodyTimeoutMs,
    );
    this.tickMs = Math.max(50, Math.min(1000, Math.floor(shortest / 4)));
  }

  /** Serve a connection whose socket `link` wraps. */
  adopt(link: (flowing: () => void) => ClientLink): ClientConn {
    const c = new ClientConn(this, link);
    this.conns.add(c);
    if (this.timer === null) {
      this.timer = setInterval(() => this.tick(), this.tickMs);
      this.timer.unref?.();
    }
    return c;
  }

  /** Serve a TLS connection whose handshake is done (the front reserved it); `peer` is the client's address. */
  adoptTls(sock: TLSSocket, peer: string): void {
    if (this.stopping) {
      sock.destroy();
      return;
    }
    const c = this.adopt((flowing) => new TlsLink(sock, peer, flowing));
    sock.on("data", (b: Buffer) => c.safely(() => c.onData(b)));
    sock.on("error", () => sock.destroy());
    sock.once("close", () => c.onClose());
  }

  /** Open client connections. */
  connections(): number {
    return this.conns.size;
  }

  /**
   * Finish after the listeners stopped accepting: exchanges in progress finish and idle connections close (all of
   * them close now when `closeActive`).
   */
  async stop(closeActive = false): Promise<void> {
    this.stopping = true;
    for (const c of this.conns) {
      if (closeActive) c.link.terminate();
      else if (c.ex === null) c.end();
    }
    while (this.conns.size > 0) await Bun.sleep(20);
  }

  private tick(): void {
    if (this.conns.size === 0) {
      if (this.timer !== null) clearInterval(this.timer);
      this.timer = null;
      return;
    }
    const now = performance.now();
    for (const c of this.conns) c.tick(now);
  }
}

/** Listen on `hostname:port` (SO_REUSEPORT, like the TLS listener) with the raw engine, plain HTTP. */
export function serveRaw(opts: RawServeOptions): RawServer {
  const engine = new RawEngine(opts);
  const listener: TCPSocketListener<ClientData> = Bun.listen<ClientData>({
    hostname: opts.hostname,
    port: opts.port,
    // Bun 1.4.5 accepts it here; its types list it for connect only
    ...({ reusePort: true } as object),
    data: {} as ClientData,
    socket: {
      binaryType: "buffer",
      open(s) {
        const peer = s.remoteAddress;
        if (engine.stopping || !engine.caps.reserve(peer)) {
          s.data = { conn: null, link: null, peer: null };
          s.write(OVER_CAPACITY);
          s.end();
          return;
        }
        let link: BunLink | undefined;
        const conn = engine.adopt((flowing) => {
          link = new BunLink(s as Socket<unknown>, flowing);
          return link;
        });
        s.data = { conn, link: link!, peer };
      },
      data(s, buf) {
        const c = s.data.conn;
        c?.safely(() => c.onData(buf as Buffer));
      },
      drain(s) {
        const link = s.data.link;
        if (link !== null) s.data.conn?.safely(() => link.drain());
      },
      close(s) {
        s.data.conn?.onClose();
        if (s.data.peer !== null) engine.caps.release(s.data.peer);
      },
      error() {},
    },
  });
  return {
    hostname: listener.hostname,
    pool: engine.pool,
    port: listener.port,
    connections: () => engine.connections(),
    async stop(closeActive = false) {
      listener.stop(false);
      await engine.stop(closeActive);
    },
  };
}
