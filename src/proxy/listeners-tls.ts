/**
 * The TLS listener. A node:net server accepts each connection and reads its ClientHello. Then:
 * - a TLS-ALPN-01 validator gets a handshake with the challenge certificate and acme-tls/1, and the connection closes
 *   (RFC 8737). A validator is a hello that names a host with a pending challenge and offers acme-tls/1.
 * - everyone else gets a server-side node:tls socket that picks the host's certificate by SNI. After the handshake the
 *   socket goes to the raw HTTP/1.1 engine, or to the h2 terminator (src/proxy/h2) when the client chose ALPN `h2`.
 *
 * Certificates are looked up for each handshake, so a certificate change needs no new listener and drops nothing.
 * (Bun.serve had to be restarted for that, since `server.reload()` ignores `tls`.)
 */
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import { createSecureContext, type SecureContext, TLSSocket } from "node:tls";
import type { Log } from "../log/logger";
import { errorText } from "./certs/acme";
import type { RawEngine } from "./h1/server";
import type { H2Terminator } from "./h2/terminator";
import { helloRecordLength, parseClientHello } from "./listeners-hello";
import type { CertSource } from "./types";

type Cached = { pem: string; ctx: SecureContext };

/**
 * The certificates to serve, as secure contexts built once per certificate. Entries by exact host name, then
 * `*.parent` for one more label. The fallback serves clients without SNI or for an unknown host.
 */
export class SniContexts {
  private byName = new Map<string, Cached>();
  private challenges = new Map<string, Cached>();
  private fallbackCtx: Cached | null = null;

  constructor(
    private readonly certs: CertSource,
    private readonly log: Log,
  ) {
    this.refresh();
  }

  /** Rebuild from the certificate source, keeping the contexts of certificates that did not change. */
  refresh(): void {
    const fb = this.certs.fallback();
    const fallback = this.build("", fb.key, fb.cert, this.fallbackCtx);
    if (fallback === null && this.fallbackCtx === null) throw new Error("the fallback certificate is unusable");
    if (fallback !== null) this.fallbackCtx = fallback;
    const next = new Map<string, Cached>();
    for (const e of this.certs.sni()) {
      const name = e.serverName.toLowerCase();
      if (!name || next.has(name)) continue;
      const c = this.build(name, e.key, e.cert, this.byName.get(name));
      if (c !== null) next.set(name, c);
    }
    this.byName = next;
    const chal = new Map<string, Cached>();
    for (const c of this.certs.alpnChallenges()) {
      const host = c.host.toLowerCase();
      const built = this.build(host, c.key, c.cert, this.challenges.get(host));
      if (built !== null) chal.set(host, built);
    }
    this.challenges = chal;
  }

  /** The context for an SNI name, undefined for the fallback. */
  lookup(name: string): SecureContext | undefined {
    const n = name.toLowerCase();
    const exact = this.byName.get(n);
    if (exact) return exact.ctx;
    const dot = n.indexOf(".");
    return dot > 0 ? this.byName.get(`*${n.slice(dot)}`)?.ctx : undefined;
  }

  get fallback(): SecureContext {
    return this.fallbackCtx!.ctx;
  }

  /** The TLS-ALPN-01 certificate pending for `host`, if any. */
  challenge(host: string): SecureContext | undefined {
    return this.challenges.get(host)?.ctx;
  }

  private build(name: string, key: string, cert: string, old: Cached | null | undefined): Cached | null {
    const pem = `${cert}\n${key}`;
    if (old?.pem === pem) return old;
    try {
      return { pem, ctx: createSecureContext({ key, cert }) };
    } catch (e) {
      // one unusable certificate must not take the others down; the old one (if any) stays until a good one comes
      this.log.error("certificate unusable, not served", { host: name || "(fallback)", error: errorText(e) });
      return old ?? null;
    }
  }
}

export interface TlsFrontOptions {
  hostname: string;
  port: number;
  contexts: SniContexts;
  engine: RawEngine;
  /** Where connections that negotiated ALPN `h2` go; null offers HTTP/1.1 only. */
  h2: H2Terminator | null;
  log: Log;
}

export interface TlsFront {
  readonly port: number;
  /** Stop accepting and drop connections still in their handshake. */
  close(): void;
}

/** Listen on `hostname:port` (SO_REUSEPORT, so a second Sundeck can start beside this one). */
export async function openTlsFront(opts: TlsFrontOptions): Promise<TlsFront> {
  const { contexts, engine, log, h2 } = opts;
  const alpn = h2 === null ? undefined : ["h2", "http/1.1"];
  const handshaking = new Set<Socket>();
  const sni = (name: string, cb: (err: Error | null, ctx?: SecureContext) => void) => cb(null, contexts.lookup(name));

  const handshake = (raw: Socket, hello: Buffer, done: () => void) => {
    const parsed = parseClientHello(hello);
    const challenge =
      parsed?.sni && parsed.alpn.includes("acme-tls/1") ? contexts.challenge(parsed.sni.toLowerCase()) : undefined;
    raw.unshift(hello);
    const peer = raw.remoteAddress ?? "";
    if (challenge) {
      const t = new TLSSocket(raw, { isServer: true, secureContext: challenge, ALPNProtocols: ["acme-tls/1"] });
      t.on("error", (e) => {
        log.debug("tls-alpn-01 handshake failed", { error: errorText(e) });
        t.destroy();
      });
      t.once("secure", () => {
        log.info("tls-alpn-01 challenge answered", { host: parsed!.sni, peer });
        t.end();
      });
      return;
    }
    const t = new TLSSocket(raw, {
      isServer: true,
      secureContext: contexts.fallback,
      SNICallback: sni,
      ALPNProtocols: alpn,
    } as ConstructorParameters<typeof TLSSocket>[1]);
    t.on("error", () => t.destroy());
    t.once("secure", () => {
      done();
      handshaking.delete(raw);
      if (h2 !== null && t.alpnProtocol === "h2") h2.adopt(t, peer);
      else engine.adoptTls(t, peer);
    });
  };

  const server: NetServer = createNetServer((raw) => {
    // past the connection caps: closed before any handshake work
    const peer = raw.remoteAddress ?? "";
    if (engine.stopping || !engine.caps.reserve(peer)) {
      raw.destroy();
      return;
    }
    handshaking.add(raw);
    raw.setNoDelay(true);
    // a client that has not finished its handshake in the head timeout is dropped, as a slow request head is
    const timer = setTimeout(() => raw.destroy(), engine.limits.headerTimeoutMs);
    raw.on("error", () => raw.destroy());
    raw.once("close", () => {
      clearTimeout(timer);
      handshaking.delete(raw);
      engine.caps.release(peer);
    });
    let buf: Buffer | null = null;
    const onData = (chunk: Buffer) => {
      buf = buf === null ? chunk : Buffer.concat([buf, chunk]);
      const need = helloRecordLength(buf);
      if (need === 0) {
        // not TLS (plain HTTP sent to the HTTPS port, a scanner): nothing to answer in
        raw.destroy();
        return;
      }
      if (buf.length < need) return;
      raw.off("data", onData);
      raw.pause();
      handshake(raw, buf, () => clearTimeout(timer));
    };
    raw.on("data", onData);
  });
  server.on("error", (e) => log.error("tls listener failed", { error: errorText(e) }));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: opts.port, host: opts.hostname, reusePort: true } as Parameters<NetServer["listen"]>[0], () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close() {
      server.close();
      for (const s of handshaking) s.destroy();
      handshaking.clear();
    },
  };
}
