/**
 * The raw HTTP/1.1 engine of the proxy: client connections on Bun.listen, upstream connections on Bun.connect, both
 * on the event loop's thread, bytes passed through with backpressure both ways. Why not Bun.serve + fetch: a response
 * that a Bun.serve handler produces after an `await` leaves with one send() per header fragment (about 18 per
 * proxied response, a known Bun limitation), and fetch hands every response across Bun's HTTP thread. Measured on the
 * 2-vCPU bench machine (docs/benchmarks.md), this engine carries 2-2.5x the 100 KiB responses per second and cuts
 * the median added latency by more than half.
 *
 * One exchange at a time per client connection; requests pipelined behind it wait, parsed when it ends. Routing,
 * limits and stats are the shared ProxyCore's (src/proxy/handler.ts). Request and response bodies are streamed with
 * their framing untouched (chunked stays chunked), except that an HTTP/1.0 client gets a chunked response decoded and
 * the connection closed after it. A WebSocket upgrade the upstream accepts (101) becomes a byte tunnel.
 */

import type { TLSSocket } from "node:tls";
import type { Socket, TCPSocketListener } from "bun";
import type { Log } from "../../log/logger";
import { GONE, IDEMPOTENT, NOT_CONNECTED } from "../attempts";
import { type Admitted, normalizeInfo, type ProxyCore } from "../handler";
import { HSTS_VALUE, headerOptions, responseHeaderPairs, upstreamHeaderPairs } from "../headers";
import { errorAnswer, type LocalAnswer } from "../pages";
import type { ConnInfo } from "../types";
import {
  BodyReader,
  FramingError,
  type HeaderList,
  headEnd,
  MAX_HEAD_BYTES,
  parseRequestHead,
  parseResponseHead,
  type RequestHead,
  type ResponseHead,
  reasonFor,
  requestFraming,
  responseFraming,
} from "./framing";
import { BunLink, type ClientLink, TlsLink } from "./link";
import { connectUpstream, discard, release, takeIdle, type UpstreamSocket, type UpstreamUser } from "./pool";

/** Idle keep-alive client connections close after this long, as on the management server. */
const IDLE_MS = 120_000;
/** A client that has not finished sending a request head after this long is dropped (slow-loris). */
const HEAD_MS = 10_000;
/** Bytes read ahead of the current exchange (pipelined requests, or a body before the upstream is connected). */
const READ_AHEAD = 256 * 1024;
/** Most bytes of an upstream response head. */
const MAX_RESPONSE_HEAD = 64 * 1024;

/** What the raw engine needs to know about a request before routing it (the plain listener's own answers). */
export interface EarlyRequest {
  method: string;
  /** Path and query as sent. */
  target: string;
  /** The Host header (or absolute-form authority), null when missing. */
  host: string | null;
}

export interface EngineOptions {
  core: ProxyCore;
  /** The client as the handler sees it, from the socket's peer address and the request's headers. */
  info(peer: string, headers: HeaderList, secure: boolean): ConnInfo;
  /** Answer a request before routing (ACME challenges, redirects); null passes it to the proxy. */
  early?(r: EarlyRequest): LocalAnswer | null;
  log: Log;
}

export interface RawServeOptions extends EngineOptions {
  hostname: string;
  port: number;
}

export interface RawServer {
  readonly hostname: string;
  readonly port: number;
  /** Open client connections. */
  connections(): number;
  /** Stop accepting; graceful (exchanges in progress finish, idle connections close) unless `closeActive`. */
  stop(closeActive?: boolean): Promise<void>;
}

interface ClientData {
  conn: ClientConn;
  link: BunLink;
}

const LOCAL_CONNECTION_CLOSE = "connection: close\r\n";

function statusLine(status: number, reason: string): string {
  return reason ? `HTTP/1.1 ${status} ${reason}` : `HTTP/1.1 ${status}`;
}

export function serializeHead(first: string, pairs: Array<[string, string]>, extra = ""): string {
  let s = `${first}\r\n`;
  for (const [k, v] of pairs) s += `${k}: ${v}\r\n`;
  return `${s}${extra}\r\n`;
}

/** Host and path of the request target: origin-form uses Host, absolute-form its own authority. */
function locate(head: RequestHead): { authority: string; target: string; path: string } | null {
  let t = head.target;
  let authority = head.headers.get("host") ?? "";
  if (!t.startsWith("/")) {
    const m = /^https?:\/\/([^/?#]*)(.*)$/i.exec(t);
    if (m === null) return null;
    authority = m[1];
    t = m[2] === "" ? "/" : m[2].startsWith("/") ? m[2] : `/${m[2]}`;
  }
  const q = t.indexOf("?");
  return { authority, target: t, path: q < 0 ? t : t.slice(0, q) };
}

function isUpgrade(head: RequestHead): boolean {
  if (head.method !== "GET") return false;
  const u = head.headers.get("upgrade");
  if (u === null || u.toLowerCase() !== "websocket") return false;
  const c = head.headers.get("connection") ?? "";
  return c
    .toLowerCase()
    .split(",")
    .some((t) => t.trim() === "upgrade");
}

function wantsClose(head: { minor: 0 | 1; headers: HeaderList }): boolean {
  const c = head.headers.get("connection")?.toLowerCase() ?? "";
  const tokens = c.split(",").map((t) => t.trim());
  if (head.minor === 0) return !tokens.includes("keep-alive");
  return tokens.includes("close");
}

/** One client connection: reads requests, runs one exchange at a time. */
class ClientConn {
  readonly link: ClientLink;
  /** Bytes received and not yet handled (a partial head, or requests pipelined behind the exchange). */
  buf: Buffer | null = null;
  /** When the partial head in `buf` began arriving (0: none). */
  headSince = 0;
  lastActive = performance.now();
  ex: Exchange | null = null;
  /** Close once the current response is written. */
  closing = false;
  closed = false;
  paused = false;

  constructor(
    readonly server: RawEngine,
    link: (flowing: () => void) => ClientLink,
  ) {
    this.link = link(() => this.ex?.clientFlowing());
  }

  pause(): void {
    if (!this.paused) {
      this.paused = true;
      this.link.pause();
    }
  }

  resume(): void {
    if (this.paused) {
      this.paused = false;
      this.link.resume();
    }
  }

  onData(chunk: Buffer): void {
    this.lastActive = performance.now();
    const ex = this.ex;
    if (ex !== null) {
      if (ex.tunnel) {
        ex.toUpstream(chunk);
        return;
      }
      let rest = chunk;
      if (!ex.reqBody.done) {
        let n: number;
        try {
          n = ex.reqBody.feed(chunk);
        } catch (e) {
          // a malformed chunked body: nothing sensible can follow on either connection
          ex.abandonBoth((e as Error).message);
          return;
        }
        if (n > 0) ex.toUpstream(n === chunk.length ? chunk : chunk.subarray(0, n));
        if (ex.reqBody.done) ex.requestDone();
        rest = chunk.subarray(n);
      }
      if (rest.length > 0) this.hold(rest);
      return;
    }
    this.hold(chunk);
    this.next();
  }

  /** Keep bytes for later; stop reading when too much waits. */
  private hold(b: Buffer): void {
    this.buf = this.buf === null ? Buffer.from(b) : Buffer.concat([this.buf, b]);
    if (this.buf.length > READ_AHEAD) this.pause();
  }

  /** Parse and start the next request in `buf`, if it has all arrived. */
  next(): void {
    while (this.ex === null && !this.closing && !this.closed && this.buf !== null) {
      const buf = this.buf;
      const end = headEnd(buf);
      if (end < 0) {
        if (buf.length > MAX_HEAD_BYTES) {
          this.refuse(431, "Request header fields too large.");
          return;
        }
        if (this.headSince === 0) this.headSince = performance.now();
        this.resume();
        return;
      }
      if (end - 4 > MAX_HEAD_BYTES) {
        this.refuse(431, "Request header fields too large.");
        return;
      }
      const text = buf.toString("latin1", 0, end - 4);
      this.buf = end < buf.length ? buf.subarray(end) : null;
      this.headSince = 0;
      const t0 = performance.now();
      try {
        this.start(parseRequestHead(text), t0);
      } catch (e) {
        if (e instanceof FramingError) {
          this.refuse(e.status, e.message);
          return;
        }
        throw e;
      }
    }
    if (this.ex === null && this.buf === null) this.resume();
  }

  private start(head: RequestHead, t0: number): void {
    const framing = requestFraming(head.headers);
    const where = locate(head);
    if (where === null) throw new FramingError(400, "unsupported request target");
    if (head.minor === 1 && !head.headers.has("host")) throw new FramingError(400, "missing Host header");
    const close = wantsClose(head);
    const s = this.server;
    const early = s.opts.early?.({ method: head.method, target: where.target, host: where.authority || null });
    if (early) {
      this.answer(early, head.method, close || framing.kind !== "none");
      return;
    }
    const info = normalizeInfo(s.opts.info(this.link.remoteAddress, head.headers, this.link.secure));
    const r = { method: head.method, authority: where.authority, path: where.path, target: where.target, headers: head.headers };
    const a = s.opts.core.admit(r, info, t0);
    // a request answered here leaves its body unread, so the connection closes after the answer
    if ("answer" in a) {
      this.answer(a.answer, head.method, close || framing.kind !== "none");
      return;
    }
    const ex = new Exchange(this, head, a.forward, new BodyReader(framing), close);
    this.ex = ex;
    // the body's first bytes may have come with the head
    const rest = this.buf;
    this.buf = null;
    if (rest !== null) this.onData(rest);
    if (this.ex === ex && ex.reqBody.done) ex.requestDone();
    ex.dial();
  }

  /** Write one of Sundeck's own answers; the connection closes after it when `close`. */
  answer(a: LocalAnswer, method: string, close: boolean): void {
    const body = Buffer.from(a.body, "utf8");
    const pairs = Object.entries(a.headers).map(([k, v]) => [k.toLowerCase(), v] as [string, string]);
    pairs.push(["content-length", String(body.length)]);
    const head = serializeHead(statusLine(a.status, reasonFor(a.status)), pairs, close ? LOCAL_CONNECTION_CLOSE : "");
    this.link.write(method === "HEAD" ? head : Buffer.concat([Buffer.from(head, "latin1"), body]));
    if (close) this.end();
  }

  private refuse(status: number, message: string): void {
    this.buf = null;
    this.answer(errorAnswer(status, message), "GET", true);
  }

  /** Close after what is queued is written. */
  end(): void {
    this.closing = true;
    this.buf = null;
    this.link.end();
  }

  /** The exchange ended; go on with the next request or close. */
  exchangeEnded(close: boolean): void {
    this.ex = null;
    this.lastActive = performance.now();
    if (close || this.closing || this.server.stopping) {
      this.end();
      return;
    }
    this.next();
  }

  onClose(): void {
    this.closed = true;
    this.ex?.clientGone();
    this.ex = null;
    this.server.conns.delete(this);
  }

  /** The periodic check: head and idle timeouts, and the exchange's. */
  tick(now: number): void {
    if (this.ex !== null) {
      this.ex.tick(now);
      return;
    }
    if (this.headSince > 0 && now - this.headSince > HEAD_MS) {
      this.link.terminate();
      return;
    }
    if (this.buf === null && now - this.lastActive > IDLE_MS) this.end();
  }
}

/** One request forwarded upstream and its response. */
class Exchange implements UpstreamUser {
  up: UpstreamSocket | null = null;
  /** Request body bytes that arrived before the upstream connection. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private readonly upHead: string;
  private readonly idempotent: boolean;
  private readonly bodyless: boolean;
  private readonly upgrade: boolean;
  /** Sent again on a fresh connection after a kept-alive one turned out closed. */
  private staleRetried = false;
  /** Moved to another replica once already (it happens at most once). */
  private rerouted = false;
  /** Waiting for response headers since (0: not waiting). */
  private deadline = 0;
  private waitingOn: string | null = null;
  private resBuf: Buffer | null = null;
  private res: ResponseHead | null = null;
  private resBody: BodyReader | null = null;
  private closeAfter: boolean;
  /** Something was written to the client for this exchange (an interim or the final head). */
  private wrote = false;
  private upPaused = false;
  private finished = false;
  tunnel = false;

  constructor(
    readonly conn: ClientConn,
    readonly head: RequestHead,
    readonly a: Admitted,
    readonly reqBody: BodyReader,
    clientClose: boolean,
  ) {
    this.closeAfter = clientClose;
    this.idempotent = IDEMPOTENT.has(head.method);
    this.bodyless = reqBody.framing.kind === "none";
    this.upgrade = isUpgrade(head);
    const pairs = upstreamHeaderPairs(head.headers, {
      ...headerOptions(a, conn.server.opts.core.proxyToken, this.bodyless),
      upgrade: this.upgrade,
    });
    const te = reqBody.framing.kind === "chunked" ? "transfer-encoding: chunked\r\n" : "";
    this.upHead = serializeHead(`${head.method} ${a.target} HTTP/1.1`, pairs, te);
  }

  private get core(): ProxyCore {
    return this.conn.server.opts.core;
  }

  /** Connect (or reuse a connection) to the chosen replica and send the request. */
  dial(): void {
    const addr = this.a.upstream;
    // one deadline for every attempt, counted from the first dial: a connect to a stopped container's address hangs
    if (this.deadline === 0) this.deadline = performance.now() + (this.upgrade ? this.core.wsConnectMs : this.core.headersMs);
    // a bodyless idempotent request may move to another replica when this one leaves the table, even mid-connect
    if (this.bodyless && this.idempotent) {
      this.unwait();
      this.waitingOn = addr;
      this.core.waiting.add(addr, this);
    }
    // an upgrade always gets a fresh connection: the tunnel uses it up anyway, and a Bun.serve upstream was seen to
    // leave an upgrade unanswered on a connection that had carried earlier requests (about 1 run in 15)
    const idle = this.upgrade ? null : takeIdle(addr, this);
    if (idle !== null) {
      this.send(idle);
      return;
    }
    connectUpstream(addr, this).then(
      (s) => {
        if (this.finished || this.a.upstream !== addr) discard(s);
        else this.send(s);
      },
      (e) => {
        if (!this.finished && this.a.upstream === addr) this.connectFailed(e);
      },
    );
  }

  private send(s: UpstreamSocket): void {
    this.up = s;
    const out = s.data.out;
    out.write(this.upHead);
    for (const b of this.pending) out.write(b);
    this.pending = [];
    this.pendingBytes = 0;
    if (out.blocked) this.conn.pause();
    else if ((this.conn.buf?.length ?? 0) <= READ_AHEAD) this.conn.resume();
  }

  private unwait(): void {
    if (this.waitingOn !== null) {
      this.core.waiting.delete(this.waitingOn, this);
      this.waitingOn = null;
    }
  }

  /** Another attempt on `upstream`: the same replica on a fresh connection, or another one. */
  private retry(upstream: string, why: string): void {
    this.core.log.debug("upstream failed, trying again", { upstream: this.a.upstream, next: upstream, error: why });
    if (upstream === this.a.upstream) this.staleRetried = true;
    else this.rerouted = true;
    this.a.upstream = upstream;
    this.resBuf = null;
    this.dial();
  }

  /** Another replica for this request, if it may still move and one is there. */
  private another(): string | null {
    return this.rerouted ? null : this.core.reroute(this.a.authority, this.a.path, this.a.upstream);
  }

  private connectFailed(e: unknown): void {
    const code = (e as { code?: string })?.code ?? "";
    // nothing was sent: an idempotent request may go to another replica, whatever its body
    const next = this.idempotent && NOT_CONNECTED.has(code) ? this.another() : null;
    if (next !== null) {
      this.retry(next, code);
      return;
    }
    this.fail(502, code || (e as Error).message);
  }

  /** Called through WaitingAttempts when the replica left the route table while this waited for headers. */
  abort(reason?: unknown): void {
    if (this.finished || this.res !== null || this.tunnel) return;
    this.waitingOn = null;
    // connected: drop the connection; still connecting: the connection, when it comes, sees another upstream chosen
    if (this.up !== null) discard(this.up);
    this.up = null;
    const next = this.another();
    if (next !== null) {
      this.retry(next, reason === GONE ? "gone" : String(reason));
      return;
    }
    this.fail(502, "upstream left the route table");
  }

  toUpstream(b: Buffer): void {
    if (this.finished) return;
    if (this.up === null) {
      this.pending.push(Buffer.from(b));
      this.pendingBytes += b.length;
      if (this.pendingBytes > READ_AHEAD) this.conn.pause();
      return;
    }
    const out = this.up.data.out;
    if (!out.write(b)) return;
    if (out.blocked) this.conn.pause();
  }

  /** The request body is complete. */
  requestDone(): void {
    if (this.res !== null && this.resBody?.done) this.complete();
  }

  onUpstreamDrain(): void {
    if (!this.up?.data.out.blocked) this.conn.resume();
  }

  /** The client's socket took everything queued. */
  clientFlowing(): void {
    if (this.upPaused && this.up !== null) {
      this.upPaused = false;
      this.up.resume();
    }
  }

  private toClient(b: Buffer): void {
    const out = this.conn.link;
    out.write(b);
    if (out.blocked && this.up !== null && !this.upPaused) {
      this.upPaused = true;
      this.up.pause();
    }
  }

  onUpstreamData(buf: Buffer): void {
    if (this.tunnel) {
      this.toClient(buf);
      return;
    }
    try {
      let head: Buffer | null = null;
      if (this.res === null) {
        const r = this.readHead(buf);
        if (r === null || this.tunnel) return;
        head = r.head;
        buf = r.rest;
      }
      this.readBody(buf, head);
    } catch (e) {
      if (!(e instanceof FramingError)) throw e;
      this.core.log.warn("upstream sent a malformed response", {
        app: this.a.route.app,
        upstream: this.a.upstream,
        error: e.message,
      });
      if (this.up !== null) discard(this.up);
      this.up = null;
      if (this.res === null) this.fail(502, e.message);
      else this.abandonBoth(e.message);
    }
  }

  /**
   * Take in response head bytes; returns the client's head and the bytes after the upstream's, or null while it is
   * incomplete.
   */
  private readHead(chunk: Buffer): { head: Buffer; rest: Buffer } | null {
    let buf = this.resBuf === null ? chunk : Buffer.concat([this.resBuf, chunk]);
    for (;;) {
      const end = headEnd(buf);
      if (end < 0) {
        if (buf.length > MAX_RESPONSE_HEAD) throw new FramingError(502, "response head too large");
        this.resBuf = Buffer.from(buf);
        return null;
      }
      this.resBuf = null;
      const head = parseResponseHead(buf.toString("latin1", 0, end - 4));
      const rest = buf.subarray(end);
      if (head.status === 101) {
        if (!this.upgrade) throw new FramingError(502, "unexpected 101");
        this.startTunnel(head, rest);
        return null;
      }
      if (head.status < 200) {
        // 100 Continue, 103 Early Hints: passed on as they are, then the final head follows
        this.wrote = true;
        this.toClient(
          Buffer.from(serializeHead(statusLine(head.status, head.reason), responseHeaderPairs(head.headers, false)), "latin1"),
        );
        buf = rest;
        if (buf.length === 0) return null;
        continue;
      }
      return { head: this.finalHead(head), rest };
    }
  }

  /** Take in the final response head; returns the head for the client. */
  private finalHead(head: ResponseHead): Buffer {
    this.res = head;
    this.deadline = 0;
    this.unwait();
    const method = this.head.method;
    const framing = responseFraming(method, head.status, head.headers);
    const dechunk = framing.kind === "chunked" && this.head.minor === 0;
    this.resBody = new BodyReader(framing, dechunk ? (b, s, e) => this.toClient(b.subarray(s, e)) : undefined, 502);
    if (framing.kind === "close" || this.head.minor === 0) this.closeAfter = true;
    const len = method === "HEAD" ? null : head.headers.get("content-length");
    this.core.record(this.a, head.status, len === null ? undefined : Number(len));
    const hsts = this.a.info.secure && this.a.route.tls !== "off";
    let extra = framing.kind === "chunked" && !dechunk ? "transfer-encoding: chunked\r\n" : "";
    if (this.closeAfter) extra += LOCAL_CONNECTION_CLOSE;
    this.wrote = true;
    return Buffer.from(
      serializeHead(statusLine(head.status, head.reason), responseHeaderPairs(head.headers, hsts), extra),
      "latin1",
    );
  }

  /** Pass response body bytes on, after the client's head when this chunk completed it (one write for both). */
  private readBody(buf: Buffer, head: Buffer | null): void {
    const body = this.resBody!;
    if (head !== null && (!body.passThrough || body.done || buf.length === 0)) {
      this.toClient(head);
      head = null;
    }
    if (buf.length > 0 && !body.done) {
      const n = body.feed(buf);
      if (body.passThrough) {
        const part = n === buf.length ? buf : buf.subarray(0, n);
        this.toClient(head === null ? part : Buffer.concat([head, part]));
      }
      if (n < buf.length) {
        // bytes after the end of the response: the connection is out of step
        if (this.up !== null) discard(this.up);
        this.up = null;
        this.closeAfter = true;
      }
    }
    if (body.done) this.complete();
  }

  private startTunnel(head: ResponseHead, rest: Buffer): void {
    this.tunnel = true;
    this.deadline = 0;
    this.unwait();
    this.core.record(this.a, 101);
    this.wrote = true;
    this.toClient(
      Buffer.from(
        serializeHead(statusLine(101, head.reason || "Switching Protocols"), responseHeaderPairs(head.headers, false, true)),
        "latin1",
      ),
    );
    if (rest.length > 0) this.toClient(rest);
    // frames the client sent after its handshake
    const held = this.conn.buf;
    this.conn.buf = null;
    if (held !== null) this.toUpstream(held);
    this.conn.resume();
  }

  /** The response is complete (and, for reuse, the request too). */
  private complete(): void {
    if (this.finished) return;
    const up = this.up;
    const reqDone = this.reqBody.done;
    if (!reqDone && this.res !== null) {
      // the upstream answered before reading the whole body: the rest cannot be told from a next request
      this.closeAfter = true;
    }
    this.finish();
    if (up !== null) {
      const h = this.res!.headers;
      const reusable = reqDone && this.res!.minor === 1 && !(h.get("connection")?.toLowerCase().includes("close") ?? false);
      if (reusable && this.resBody!.framing.kind !== "close") {
        // paused while the client lagged behind: an idle pooled connection must be read (a next request, a close)
        if (this.upPaused) up.resume();
        release(up);
      } else discard(up);
    }
    this.conn.exchangeEnded(this.closeAfter);
  }

  private finish(): void {
    this.finished = true;
    this.deadline = 0;
    this.unwait();
    this.up = null;
  }

  onUpstreamClose(): void {
    if (this.finished) return;
    const reused = (this.up?.data.uses ?? 1) > 1;
    this.up = null;
    if (this.tunnel) {
      this.finish();
      this.conn.end();
      return;
    }
    if (this.res === null) {
      if (this.idempotent && this.bodyless && !this.wrote) {
        // a kept-alive connection the upstream closed as the request went out: send it again on a fresh one
        if (reused && !this.staleRetried) {
          this.retry(this.a.upstream, "stale connection");
          return;
        }
        // a replica going away (stopping, crashing) closes without answering: a safe request tries another once
        const next = this.another();
        if (next !== null) {
          this.retry(next, "closed without a response");
          return;
        }
      }
      this.fail(502, "upstream closed the connection");
      return;
    }
    if (this.resBody?.framing.kind === "close") {
      this.resBody.done = true;
      this.complete();
      return;
    }
    // a response cut short: the client must not take it for a whole one
    this.finish();
    this.conn.link.terminate();
  }

  /** Answer the client with an error page (when nothing of a response was written), or drop it. */
  private fail(status: 502 | 504, error: string): void {
    const { log } = this.core;
    const fields = { app: this.a.route.app, upstream: this.a.upstream, error };
    if (status === 504)
      log.warn("upstream sent no response headers in time", {
        ...fields,
        ms: this.upgrade ? this.core.wsConnectMs : this.core.headersMs,
      });
    else log.warn("upstream request failed", fields);
    if (this.up !== null) discard(this.up);
    this.finish();
    if (this.res !== null || this.tunnel) {
      this.conn.link.terminate();
      return;
    }
    const message =
      status === 504
        ? "The app did not answer in time. Please try again."
        : "The app could not be reached. Please try again in a moment.";
    const hsts = this.a.info.secure && this.a.route.tls !== "off";
    const a = errorAnswer(status, message, hsts ? { "strict-transport-security": HSTS_VALUE } : undefined);
    this.core.record(this.a, status);
    const close = this.closeAfter || !this.reqBody.done;
    this.conn.ex = null;
    this.conn.answer(a, this.head.method, close);
    if (!close) this.conn.exchangeEnded(false);
  }

  /** Both sides are out of step (a malformed body): close both. */
  abandonBoth(why: string): void {
    this.core.log.warn("proxied message malformed, connection closed", { app: this.a.route.app, error: why });
    if (this.up !== null) discard(this.up);
    this.finish();
    this.conn.link.terminate();
  }

  clientGone(): void {
    if (this.finished) return;
    const up = this.up;
    this.finish();
    if (up !== null) {
      if (this.tunnel) up.end();
      else discard(up);
    }
  }

  tick(now: number): void {
    if (this.deadline > 0 && now > this.deadline && this.res === null && !this.tunnel) this.fail(504, "timeout");
  }
}

/** The connections of one listener (or of several: the TLS front hands over sockets after their handshake). */
export class RawEngine {
  readonly conns = new Set<ClientConn>();
  stopping = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly tickMs: number;

  constructor(readonly opts: EngineOptions) {
    this.tickMs = Math.max(50, Math.min(1000, Math.floor(Math.min(opts.core.headersMs, opts.core.wsConnectMs) / 4)));
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

  /** Serve a TLS connection whose handshake is done; `peer` is the client's address. */
  adoptTls(sock: TLSSocket, peer: string): void {
    if (this.stopping) {
      sock.destroy();
      return;
    }
    const c = this.adopt((flowing) => new TlsLink(sock, peer, flowing));
    sock.on("data", (b: Buffer) => c.onData(b));
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
        let link: BunLink | undefined;
        const conn = engine.adopt((flowing) => {
          link = new BunLink(s as Socket<unknown>, flowing);
          return link;
        });
        s.data = { conn, link: link! };
      },
      data(s, buf) {
        s.data.conn.onData(buf as Buffer);
      },
      drain(s) {
        s.data.link.drain();
      },
      close(s) {
        s.data.conn?.onClose();
      },
      error() {},
    },
  });
  return {
    hostname: listener.hostname,
    port: listener.port,
    connections: () => engine.connections(),
    async stop(closeActive = false) {
      listener.stop(false);
      await engine.stop(closeActive);
    },
  };
}
