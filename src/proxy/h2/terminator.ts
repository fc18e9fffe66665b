/**
 * HTTP/2 to clients (issue 29; the design spike is in docs/benchmarks.md): the TLS front negotiates ALPN `h2` and
 * hands the connection here. Its decrypted bytes are piped to an internal cleartext (prior knowledge) h2 Bun.serve on
 * loopback, whose parser checks the frames and HPACK and whose handler runs the same admission as an HTTP/1.1 request
 * (routing, allowlists, rate limits, stats: ProxyCore) and forwards over the raw engine's HTTP/1.1 upstream pool
 * (forward.ts). One TLS: the front keeps certificates per handshake and TLS-ALPN-01. The handler sees the pipe's
 * loopback address; the pipe's local port maps it back to the client's. The connection stays counted in the front's
 * connection caps until the client's socket closes.
 */
import type { TLSSocket } from "node:tls";
import type { Server, Socket } from "bun";
import type { Log } from "../../log/logger";
import { METHODS } from "../h1/framing";
import type { EngineLimits } from "../h1/limits";
import { Outbox } from "../h1/outbox";
import type { UpstreamPool } from "../h1/pool";
import { canonicalAuthority, validAuthority } from "../h1/request-target";
import { normalizeInfo, type ProxyCore } from "../handler";
import type { HeaderSource } from "../headers";
import { errorAnswer } from "../pages";
import type { ConnInfo } from "../types";
import { forward } from "./forward";
import { answerResponse } from "./messages";

export interface H2Options {
  core: ProxyCore;
  info(peer: string, headers: HeaderSource, secure: boolean): ConnInfo;
  pool: UpstreamPool;
  limits: EngineLimits;
  log: Log;
}

/** How long a graceful stop waits for h2 connections to finish before cutting them. */
const STOP_GRACE_MS = 10_000;

/** Client bytes held while the pipe connects, before the client is paused. */
const HELD_MAX = 64 * 1024;

interface PipeData {
  t: TLSSocket;
  out: Outbox | null;
}

export class H2Terminator {
  private readonly peers = new Map<number, string>();
  private readonly pipes = new Set<Socket<PipeData>>();
  private readonly server: Server<unknown>;

  constructor(private readonly o: H2Options) {
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      http2: true,
      // seconds, at most 255 in Bun
      idleTimeout: Math.max(1, Math.min(255, Math.ceil(o.limits.idleTimeoutMs / 1000))),
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      fetch: (req: Request, srv: Server<unknown>) => this.handle(req, srv),
      error: (e: Error) => {
        o.log.error("proxy engine error (h2)", { error: e.stack ?? String(e) });
        return new Response(null, { status: 500 });
      },
    } as Parameters<typeof Bun.serve>[0]) as Server<unknown>;
  }

  /** h2 connections open now. */
  get size(): number {
    return this.pipes.size;
  }

  /** Serve an h2 connection whose TLS handshake is done; `peer` is the client's address. */
  adopt(t: TLSSocket, peer: string): void {
    const held: Buffer[] = [];
    let heldBytes = 0;
    const early = (b: Buffer) => {
      held.push(b);
      heldBytes += b.length;
      if (heldBytes > HELD_MAX) t.pause();
    };
    t.on("data", early);
    t.on("error", () => t.destroy());
    const data: PipeData = { t, out: null };
    Bun.connect<PipeData>({
      hostname: "127.0.0.1",
      port: this.server.port as number,
      data,
      socket: {
        binaryType: "buffer",
        data: (_s, b) => {
          // Bun's frames for the client; a client that does not read pauses the pipe, and Bun's h2 then holds
          if (!t.write(b)) _s.pause();
        },
        drain: (s) => s.data.out?.drain(),
        close: (s) => {
          this.pipes.delete(s);
          this.peers.delete(s.localPort);
          t.destroy();
        },
        error: () => {},
      },
    }).then(
      (s) => {
        if (t.destroyed) {
          s.terminate();
          return;
        }
        this.pipes.add(s);
        this.peers.set(s.localPort, peer);
        s.setNoDelay(true);
        const out = new Outbox(s as Socket<unknown>, () => t.resume());
        s.data.out = out;
        t.off("data", early);
        for (const b of held) out.write(b);
        t.on("data", (b: Buffer) => {
          out.write(b);
          if (out.blocked) t.pause();
        });
        t.on("drain", () => s.resume());
        t.once("close", () => s.end());
        if (!out.blocked) t.resume();
      },
      (e) => {
        this.o.log.error("h2 terminator unreachable", { error: String(e) });
        t.destroy();
      },
    );
  }

  private handle(req: Request, srv: Server<unknown>): Response | Promise<Response> {
    const t0 = performance.now();
    const addr = srv.requestIP(req);
    const peer = addr === null ? undefined : this.peers.get(addr.port);
    // only the front's pipes reach this listener's handler with a client behind them
    if (peer === undefined) return new Response(null, { status: 421 });
    const bad = this.refusal(req);
    if (bad !== null) return answerResponse(errorAnswer(bad.status, bad.message), req.method);
    const host = req.headers.get("host")!;
    const url = req.url;
    const at = url.indexOf("/", url.indexOf("//") + 2);
    const target = at < 0 ? "/" : url.slice(at);
    const q = target.indexOf("?");
    const path = q < 0 ? target : target.slice(0, q);
    const info = normalizeInfo(this.o.info(peer, req.headers, true));
    const r = { method: req.method, authority: canonicalAuthority(host), path, target, headers: req.headers };
    const a = this.o.core.admit(r, info, t0);
    if ("answer" in a) return answerResponse(a.answer, req.method);
    return forward({ core: this.o.core, pool: this.o.pool, limits: this.o.limits }, req, a.forward);
  }

  /** What the HTTP/1.1 engine refuses too: an unknown method, a bad authority, too many or too large fields. */
  private refusal(req: Request): { status: number; message: string } | null {
    if (!METHODS.has(req.method)) return { status: 501, message: "This request method is not supported." };
    const host = req.headers.get("host");
    if (host === null || !validAuthority(host)) return { status: 400, message: "The request's authority is invalid." };
    let n = 0;
    let bytes = 0;
    for (const [k, v] of req.headers) {
      n++;
      bytes += k.length + v.length + 4;
    }
    const { maxHeaders, maxHeaderBytes } = this.o.limits;
    if (n > maxHeaders || bytes > maxHeaderBytes) return { status: 431, message: "Request header fields too large." };
    return null;
  }

  /** Stop: no new streams; open ones finish (at most STOP_GRACE_MS), or are cut at once when `closeActive`. */
  async stop(closeActive = false): Promise<void> {
    void this.server.stop(closeActive);
    const by = performance.now() + (closeActive ? 0 : STOP_GRACE_MS);
    while (this.pipes.size > 0 && performance.now() < by) await Bun.sleep(20);
    for (const s of this.pipes) s.terminate();
  }
}
