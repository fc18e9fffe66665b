/**
 * The ALPN window's front. Bun.serve never negotiates ALPN, so while TLS-ALPN-01 challenges are pending a node:net
 * server takes over the TLS port (SO_REUSEPORT) and reads each ClientHello: a validator (SNI = challenge host, ALPN
 * offering acme-tls/1) is relayed to a node:tls server that presents the challenge certificate and negotiates
 * acme-tls/1; every other connection is relayed, still encrypted, to an internal Bun.serve TLS listener on loopback
 * that serves the normal certificates. The relay's local port identifies the client to that listener.
 */
import { createServer as createNetServer, type Server as NetServer, connect as netConnect, type Socket } from "node:net";
import { createSecureContext, createServer as createTlsServer, type SecureContext, type Server as TlsServer } from "node:tls";
import type { Log } from "../log/logger";
import { errorText } from "./certs/acme";
import { helloRecordLength, parseClientHello } from "./listeners-hello";
import type { AlpnChallenge, SniEntry } from "./types";

/** A client that has not finished its ClientHello after this long is dropped. */
const HELLO_TIMEOUT_MS = 10_000;

export interface AlpnFrontOptions {
  hostname: string;
  port: number;
  /** The pending challenges, read for every connection. */
  challenges: () => AlpnChallenge[];
  /** The loopback port of the TLS listener that serves everything else (it may change during the window). */
  target: () => number;
  /** Relay local port -> client address, read by the internal listener. */
  clients: Map<number, string>;
  /** Default certificate of the challenge server (never shown to a validator). */
  fallback: SniEntry;
  log: Log;
}

export interface AlpnFront {
  /** Stop accepting; relays in progress continue until either side closes. */
  close(): void;
  /** Close everything now, relays included. */
  destroy(): void;
  /** Resolves when no accepted connection is still waiting to be routed (at most the ClientHello timeout). */
  routed(): Promise<void>;
  /**
   * Resolves when no relay to the loopback `port` is open. Stopping a listener resets connections it has not taken
   * over yet (measured: about 4 per stop under load), so an internal listener is stopped only once nothing is relayed
   * to it; idle relayed keep-alive connections end with its 120 s idle timeout at the latest.
   */
  released(port: number): Promise<void>;
}

/** Listen on the TLS port beside the current listener (which the caller then stops). */
export async function openAlpnFront(opts: AlpnFrontOptions): Promise<AlpnFront> {
  const { log } = opts;
  const contexts = new Map<string, { cert: string; ctx: SecureContext }>();
  const contextFor = (host: string): SecureContext | undefined => {
    const ch = opts.challenges().find((c) => c.host === host);
    if (!ch) return undefined;
    const cached = contexts.get(host);
    if (cached?.cert === ch.cert) return cached.ctx;
    try {
      const ctx = createSecureContext({ key: ch.key, cert: ch.cert });
      contexts.set(host, { cert: ch.cert, ctx });
      return ctx;
    } catch (e) {
      log.error("tls-alpn-01 certificate unusable", { host, error: errorText(e) });
      return undefined;
    }
  };

  const challengeServer: TlsServer = createTlsServer(
    {
      key: opts.fallback.key,
      cert: opts.fallback.cert,
      ALPNProtocols: ["acme-tls/1"],
      SNICallback: (name, cb) => cb(null, contextFor(name.toLowerCase())),
    },
    // RFC 8737: the validator only looks at the handshake; close right after it
    (sock) => sock.end(),
  );
  challengeServer.on("tlsClientError", (e) => log.debug("tls-alpn-01 handshake failed", { error: errorText(e) }));
  await listen(challengeServer, { port: 0, host: "127.0.0.1" });
  const challengePort = (challengeServer.address() as { port: number }).port;

  const open = new Set<Socket>();
  // connections whose ClientHello has not been routed yet: the internal listener must outlive them
  let unrouted = 0;
  const routedWaiters: Array<() => void> = [];
  // open relays per target port, and who waits for one to reach zero
  const perPort = new Map<number, number>();
  let releaseWaiters: Array<{ port: number; r: () => void }> = [];
  const release = (port: number) => {
    const n = (perPort.get(port) ?? 1) - 1;
    if (n > 0) return void perPort.set(port, n);
    perPort.delete(port);
    releaseWaiters = releaseWaiters.filter((w) => (w.port === port ? void w.r() : true));
  };
  const routed = () => {
    unrouted--;
    if (unrouted === 0) for (const r of routedWaiters.splice(0)) r();
  };

  const relay = (sock: Socket, first: Buffer, port: number, client: string | null) => {
    const up = netConnect({ host: "127.0.0.1", port });
    perPort.set(port, (perPort.get(port) ?? 0) + 1);
    let localPort = 0;
    let connected = false;
    let finished = false;
    let linger: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      if (finished) return;
      finished = true;
      release(port);
      clearTimeout(linger);
      sock.destroy();
      up.destroy();
      if (localPort && opts.clients.get(localPort) === client) opts.clients.delete(localPort);
      if (!connected) {
        connected = true;
        routed();
      }
    };
    // one side closed: let the other flush what it still has (a last response, a close_notify) and close cleanly
    const closed = (other: Socket) => {
      if (finished) return;
      if (other.destroyed) return finish();
      if (!other.writableEnded) other.end();
      linger ??= setTimeout(finish, 5000);
    };
    up.once("connect", () => {
      connected = true;
      routed();
      localPort = up.localPort ?? 0;
      if (client && localPort) opts.clients.set(localPort, client);
      up.setNoDelay(true);
      up.write(first);
      sock.pipe(up);
      up.pipe(sock);
      sock.resume();
    });
    up.on("error", finish);
    sock.on("error", finish);
    up.on("close", () => closed(sock));
    sock.on("close", () => closed(up));
  };

  const front: NetServer = createNetServer((sock) => {
    open.add(sock);
    unrouted++;
    let routing = false;
    sock.setNoDelay(true);
    sock.on("error", () => sock.destroy());
    sock.on("close", () => {
      open.delete(sock);
      if (!routing) routed();
    });
    let buf: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => sock.destroy(), HELLO_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      const need = helloRecordLength(buf);
      if (need !== 0 && buf.length < need) return;
      sock.off("data", onData);
      sock.pause();
      clearTimeout(timer);
      routing = true;
      const hello = parseClientHello(buf);
      const validator = !!hello?.sni && hello.alpn.includes("acme-tls/1") && !!contextFor(hello.sni);
      relay(sock, buf, validator ? challengePort : opts.target(), validator ? null : (sock.remoteAddress ?? null));
    };
    sock.on("data", onData);
  });
  front.on("error", (e) => log.error("alpn front failed", { error: errorText(e) }));
  await listen(front, { port: opts.port, host: opts.hostname, reusePort: true });

  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    front.close();
    challengeServer.close();
  };
  return {
    close,
    destroy() {
      close();
      for (const s of open) s.destroy();
    },
    routed: () => (unrouted === 0 ? Promise.resolve() : new Promise<void>((r) => routedWaiters.push(r))),
    released: (port) => (!perPort.get(port) ? Promise.resolve() : new Promise<void>((r) => releaseWaiters.push({ port, r }))),
  };
}

function listen(server: NetServer, opts: { port: number; host: string; reusePort?: boolean }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts as Parameters<NetServer["listen"]>[0], () => {
      server.off("error", reject);
      resolve();
    });
  });
}
