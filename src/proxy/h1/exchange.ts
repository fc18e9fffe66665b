/**
 * One request forwarded upstream and its response, in the raw engine. The engine writes its own framing both ways:
 * a Content-Length body passes through under its checked length, a chunked body is decoded and re-encoded (extensions
 * and trailers dropped), and no Content-Length, Transfer-Encoding or Connection of either party is forwarded as
 * received. A response that breaks the rules is a 502 while nothing of it has reached the client, and a dropped
 * connection after; an upstream connection that sent anything past its response is never reused.
 */
import { GONE, IDEMPOTENT, NOT_CONNECTED } from "../attempts";
import type { Admitted, ProxyCore } from "../handler";
import { connectionTokens, HSTS_VALUE, headerOptions, responseHeaderPairs, upstreamHeaderPairs } from "../headers";
import { errorAnswer } from "../pages";
import { BodyReader, encodeChunks } from "./body";
import type { ClientConn } from "./client";
import {
  type Framing,
  FramingError,
  headEnd,
  parseResponseHead,
  type RequestHead,
  type ResponseHead,
  responseFraming,
} from "./framing";
import { discard, type UpstreamSocket, type UpstreamUser } from "./pool";
import { CONNECTION_CLOSE, serializeHead, statusLine } from "./wire";

/** Bytes read ahead of the current exchange (pipelined requests, or a body before the upstream is connected). */
export const READ_AHEAD = 256 * 1024;
/** Most bytes of an upstream response head. */
const MAX_RESPONSE_HEAD = 64 * 1024;
/** Most header fields of an upstream response head. */
const MAX_RESPONSE_HEADERS = 500;
/** Largest first body part copied to leave in one write with the response head. */
const JOIN_MAX = 16 * 1024;
/** Silence after which a tunnel's sockets send TCP keep-alive probes. */
const TUNNEL_KEEPALIVE_MS = 60_000;

/** A WebSocket handshake: a bodyless GET asking to upgrade to websocket. */
function isUpgrade(head: RequestHead, framing: Framing): boolean {
  if (head.method !== "GET" || framing.kind !== "none") return false;
  const u = head.headers.get("upgrade");
  if (u === null || u.toLowerCase() !== "websocket") return false;
  return connectionTokens(head.headers.get("connection")).includes("upgrade");
}

export class Exchange implements UpstreamUser {
  up: UpstreamSocket | null = null;
  readonly reqBody: BodyReader;
  /** Request body bytes that arrived before the upstream connection. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Payload of a chunked request decoded by the current feed, to re-encode. */
  private reqParts: Buffer[] = [];
  private readonly upHead: string;
  private readonly idempotent: boolean;
  private readonly bodyless: boolean;
  private readonly upgrade: boolean;
  /** Sent again on a fresh connection after a kept-alive one turned out closed. */
  private staleRetried = false;
  /** Moved to another replica once already (it happens at most once). */
  private rerouted = false;
  /** Give up waiting for response headers at (0: not waiting). */
  private deadline = 0;
  private waitingOn: string | null = null;
  private resBuf: Buffer | null = null;
  private res: ResponseHead | null = null;
  private resBody: BodyReader | null = null;
  /** Payload of a chunked response decoded by the current feed. */
  private resParts: Buffer[] = [];
  /** A chunked response goes to an HTTP/1.1 client re-encoded (else decoded for an HTTP/1.0 one). */
  private rechunk = false;
  private closeAfter: boolean;
  /** Something was written to the client for this exchange (an interim or the final head). */
  private wrote = false;
  /** The final response head was written to the client. */
  private headSent = false;
  /** The upstream sent bytes past the end of its response: its connection is out of step. */
  private stray = false;
  private upPaused = false;
  /** When the client last sent body bytes, and when the upstream last sent response bytes (body timeouts). */
  private lastBodyAt = performance.now();
  private lastUpAt = 0;
  finished = false;
  tunnel = false;

  constructor(
    readonly conn: ClientConn,
    readonly head: RequestHead,
    readonly a: Admitted,
    framing: Framing,
    clientClose: boolean,
  ) {
    this.closeAfter = clientClose;
    this.idempotent = IDEMPOTENT.has(head.method);
    this.bodyless = framing.kind === "none" || (framing.kind === "length" && framing.length === 0);
    this.upgrade = isUpgrade(head, framing);
    const limits = conn.server.limits;
    this.reqBody = new BodyReader(
      framing,
      framing.kind === "chunked" ? (b, s, e) => this.reqParts.push(b.subarray(s, e)) : undefined,
      400,
      limits,
    );
    const pairs = upstreamHeaderPairs(head.headers, {
      ...headerOptions(a, this.core.proxyToken, this.bodyless),
      upgrade: this.upgrade,
    });
    let framingLine = "";
    if (framing.kind === "chunked") framingLine = "transfer-encoding: chunked\r\n";
    else if (framing.kind === "length") framingLine = `content-length: ${framing.length}\r\n`;
    this.upHead = serializeHead(`${head.method} ${a.target} HTTP/1.1`, pairs, framingLine);
  }

  private get core(): ProxyCore {
    return this.conn.server.opts.core;
  }

  /** Connect (or reuse a connection) to the chosen replica and send the request. */
  dial(): void {
    if (this.finished) return;
    const addr = this.a.upstream;
    const pool = this.conn.server.pool;
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
    const idle = this.upgrade ? null : pool.take(addr, this);
    if (idle !== null) {
      this.send(idle);
      return;
    }
    pool.connect(addr, this).then(
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

  /**
   * Request body bytes from the client: checked against the request's framing and forwarded under the engine's own.
   * Returns how many bytes of `chunk` belong to the body, or -1 when the body was malformed (the exchange is over).
   */
  requestBytes(chunk: Buffer): number {
    this.lastBodyAt = performance.now();
    let n: number;
    try {
      n = this.reqBody.feed(chunk);
    } catch (e) {
      if (!(e instanceof FramingError)) throw e;
      this.requestBodyError(e);
      return -1;
    }
    if (this.reqBody.passThrough) {
      if (n > 0) this.toUpstream(n === chunk.length ? chunk : chunk.subarray(0, n));
    } else if (this.reqParts.length > 0 || this.reqBody.done) {
      const parts = this.reqParts;
      this.reqParts = [];
      this.toUpstream(encodeChunks(parts, this.reqBody.done));
    }
    return n;
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
      this.lastUpAt = performance.now();
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
    this.lastUpAt = performance.now();
    if (this.tunnel) {
      this.toClient(buf);
      return;
    }
    try {
      let head: Buffer | null = null;
      if (this.res === null) {
        const r = this.readHead(buf);
        if (r === null || this.tunnel || this.finished) return;
        head = r.head;
        buf = r.rest;
      }
      this.readBody(buf, head);
    } catch (e) {
      if (!(e instanceof FramingError)) {
        this.onUpstreamError(e);
        return;
      }
      this.core.log.warn("upstream sent a malformed response", {
        app: this.a.route.app,
        upstream: this.a.upstream,
        error: e.message,
      });
      if (this.up !== null) discard(this.up);
      this.up = null;
      if (!this.headSent) this.fail(502, e.message);
      else this.abandonBoth(e.message);
    }
  }

  /**
   * Take in response head bytes; returns the client's head and the bytes after the upstream's, or null while it is
   * incomplete (or when it was an interim response, a tunnel, or the end of the exchange).
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
      const head = parseResponseHead(buf.toString("latin1", 0, end - 4), MAX_RESPONSE_HEADERS);
      const rest = buf.subarray(end);
      if (head.status === 101) {
        if (!this.upgrade) throw new FramingError(502, "unexpected 101");
        this.startTunnel(head, rest);
        return null;
      }
      if (head.status < 200) {
        // 100 Continue, 103 Early Hints: passed on to HTTP/1.1 clients (HTTP/1.0 has no interim responses)
        if (this.head.minor === 1) {
          this.wrote = true;
          this.toClient(
            Buffer.from(serializeHead(statusLine(head.status, head.reason), responseHeaderPairs(head.headers, false)), "latin1"),
          );
        }
        buf = rest;
        if (buf.length === 0) return null;
        continue;
      }
      return { head: this.finalHead(head), rest };
    }
  }

  /** Take in the final response head; returns the head for the client, with the engine's own framing. */
  private finalHead(head: ResponseHead): Buffer {
    const method = this.head.method;
    // may refuse the response: before anything about it is taken in
    const { framing, metaLength } = responseFraming(method, head.status, head);
    this.res = head;
    this.deadline = 0;
    this.unwait();
    const client11 = this.head.minor === 1;
    const chunked = framing.kind === "chunked";
    this.rechunk = chunked && client11;
    this.resBody = new BodyReader(
      framing,
      chunked ? (b, s, e) => this.resParts.push(b.subarray(s, e)) : undefined,
      502,
      this.conn.server.limits,
    );
    if (framing.kind === "close" || !client11) this.closeAfter = true;
    let extra = "";
    if (framing.kind === "length") extra = `content-length: ${framing.length}\r\n`;
    else if (metaLength !== null) extra = `content-length: ${metaLength}\r\n`;
    else if (this.rechunk) extra = "transfer-encoding: chunked\r\n";
    if (this.closeAfter) extra += CONNECTION_CLOSE;
    const hsts = this.a.info.secure && this.a.route.tls !== "off";
    return Buffer.from(
      serializeHead(statusLine(head.status, head.reason), responseHeaderPairs(head.headers, hsts), extra),
      "latin1",
    );
  }

  /** The final head is on its way to the client: count the response. */
  private sentHead(): void {
    this.headSent = true;
    this.wrote = true;
    const f = this.resBody!.framing;
    this.core.record(this.a, this.res!.status, f.kind === "length" ? f.length : undefined);
  }

  /**
   * Pass response body bytes on, after the client's head when this chunk completed it (one write for both).
   * Content-Length and close-delimited bodies pass as they are; chunked ones are decoded and, for an HTTP/1.1
   * client, re-encoded.
   */
  private readBody(buf: Buffer, head: Buffer | null): void {
    const body = this.resBody!;
    let n = 0;
    if (buf.length > 0 && !body.done) n = body.feed(buf);
    let out: Buffer | null = null;
    if (body.passThrough) {
      if (n > 0) out = n === buf.length ? buf : buf.subarray(0, n);
    } else if (this.resParts.length > 0 || (body.done && this.rechunk)) {
      const parts = this.resParts;
      this.resParts = [];
      out = this.rechunk ? encodeChunks(parts, body.done) : parts.length === 1 ? parts[0] : Buffer.concat(parts);
    }
    if (head !== null) {
      this.sentHead();
      // one write for a small response (one TCP segment); a large first part is not worth copying to join the head
      if (out !== null && out.length > JOIN_MAX) this.toClient(head);
      else out = out === null ? head : Buffer.concat([head, out]);
    }
    if (out !== null) this.toClient(out);
    // bytes after the end of the response: the upstream connection is out of step
    if (n < buf.length) this.stray = true;
    if (body.done) this.complete();
  }

  /** A bug on the upstream side: it costs this exchange and both its connections, never the process. */
  onUpstreamError(e: unknown): void {
    this.core.log.error("proxy engine error, connection dropped", { error: (e as Error)?.stack ?? String(e) });
    this.abandonBoth("engine error");
  }

  private startTunnel(head: ResponseHead, rest: Buffer): void {
    this.tunnel = true;
    // a tunnel has no timeout of its own (apps ping, or not); keep-alive probes find a peer that vanished
    this.conn.link.keepAlive(TUNNEL_KEEPALIVE_MS);
    this.up?.setKeepAlive(true, TUNNEL_KEEPALIVE_MS);
    this.deadline = 0;
    this.unwait();
    this.core.record(this.a, 101);
    this.wrote = true;
    this.headSent = true;
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
    // the upstream answered before reading the whole body: the rest cannot be told from a next request
    if (!reqDone) this.closeAfter = true;
    this.finish();
    if (up !== null) {
      const res = this.res!;
      // an upgrade the app refused is not reused either: an app may answer it and still treat the socket as its own
      const reusable =
        reqDone &&
        !this.upgrade &&
        !this.stray &&
        res.minor === 1 &&
        this.resBody!.framing.kind !== "close" &&
        !connectionTokens(res.headers.get("connection")).includes("close");
      if (reusable) {
        // paused while the client lagged behind: an idle pooled connection must be read (a next request, a close)
        if (this.upPaused) up.resume();
        this.conn.server.pool.release(up);
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
      // the head went out with the first body bytes (or alone): the close is the end of the body
      this.resBody.done = true;
      this.complete();
      return;
    }
    // a response cut short: the client must not take it for a whole one
    this.finish();
    this.conn.link.terminate();
  }

  /** Answer the client with an error page (when no final head was written), or drop it. */
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
    if (this.headSent || this.tunnel) {
      this.conn.link.terminate();
      return;
    }
    const message =
      status === 504
        ? "The app did not answer in time. Please try again."
        : "The app could not be reached. Please try again in a moment.";
    this.localAnswer(status, message, this.closeAfter || !this.reqBody.done);
  }

  /** One of Sundeck's own answers in place of the app's; the exchange is over. */
  private localAnswer(status: number, message: string, close: boolean): void {
    const hsts = this.a.info.secure && this.a.route.tls !== "off";
    const a = errorAnswer(status, message, hsts ? { "strict-transport-security": HSTS_VALUE } : undefined);
    this.core.record(this.a, status);
    this.conn.ex = null;
    this.conn.answer(a, this.head.method, close);
    if (!close) this.conn.exchangeEnded(false);
  }

  /** The request body broke its framing: 400 while nothing was answered, else the connection drops. */
  private requestBodyError(e: FramingError): void {
    this.core.log.debug("malformed request body", { app: this.a.route.app, error: e.message });
    if (this.up !== null) discard(this.up);
    const answered = this.wrote;
    this.finish();
    if (answered) this.conn.link.terminate();
    else this.localAnswer(e.status, "The request was malformed.", true);
  }

  /** Both sides are out of step (a malformed response body): close both. */
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

  /** The periodic check: response head deadline, request body and response body gaps. */
  tick(now: number): void {
    if (this.finished || this.tunnel) return;
    const limits = this.conn.server.limits;
    if (this.deadline > 0 && now > this.deadline && this.res === null) {
      this.fail(504, "timeout");
      return;
    }
    // a side paused by backpressure is not idle
    if (this.conn.paused) this.lastBodyAt = now;
    if (this.upPaused) this.lastUpAt = now;
    if (!this.reqBody.done && now - this.lastBodyAt > limits.bodyTimeoutMs) {
      this.core.log.debug("request body timed out", { app: this.a.route.app });
      if (this.up !== null) discard(this.up);
      const answered = this.wrote;
      this.finish();
      if (answered) this.conn.link.terminate();
      else this.localAnswer(408, "The request body did not arrive in time.", true);
      return;
    }
    if (this.res !== null && !this.resBody!.done && now - this.lastUpAt > limits.upstreamBodyTimeoutMs) {
      this.core.log.warn("upstream response body timed out", { app: this.a.route.app, upstream: this.a.upstream });
      if (!this.headSent) this.fail(502, "response body timed out");
      else this.abandonBoth("response body timed out");
    }
  }
}
