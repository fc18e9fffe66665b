/**
 * One request forwarded upstream and its response, in the raw engine. The engine writes its own framing both ways:
 * a Content-Length body passes through under its checked length, a chunked body is decoded and re-encoded (extensions
 * and trailers dropped), and no Content-Length, Transfer-Encoding or Connection of either party is forwarded as
 * received. A response that breaks the rules is a 502 while nothing of it has reached the client, and a dropped
 * connection after; an upstream connection that sent anything past its response is never reused.
 * Here: dialling, retries and the request body; the response is read in response.ts, a WebSocket upgrade becomes a
 * tunnel in tunnel.ts, and error answers and timeouts are failure.ts.
 */
import { GONE, IDEMPOTENT, NOT_CONNECTED } from "../attempts";
import type { Admitted, ProxyCore } from "../handler";
import { connectionTokens, headerOptions, upstreamHeaderPairs } from "../headers";
import { BodyReader, encodeChunks } from "./body";
import type { ClientConn } from "./client";
import { abandonBoth, fail, requestBodyError } from "./failure";
import { type Framing, FramingError, type RequestHead, type ResponseHead } from "./framing";
import { discard, type UpstreamSocket, type UpstreamUser } from "./pool";
import { readResponseBody, readResponseHead } from "./response";
import { goAway, isUpgrade, type TunnelState, tunnelDown } from "./tunnel";
import { serializeHead } from "./wire";

/** Bytes read ahead of the current exchange (pipelined requests, or a body before the upstream is connected). */
export const READ_AHEAD = 256 * 1024;

/**
 * One forwarded request, from dialling the replica to the end of the response. Fields without `private` are shared
 * with the exchange's other files (response.ts, tunnel.ts, failure.ts), which act on it.
 */
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
  readonly upgrade: boolean;
  /** Sent again on a fresh connection after a kept-alive one turned out closed. */
  private staleRetried = false;
  /** Moved to another replica once already (it happens at most once). */
  private rerouted = false;
  /** Give up waiting for response headers at (0: not waiting). */
  deadline = 0;
  private waitingOn: string | null = null;
  resBuf: Buffer | null = null;
  res: ResponseHead | null = null;
  resBody: BodyReader | null = null;
  /** Payload of a chunked response decoded by the current feed. */
  resParts: Buffer[] = [];
  /** A chunked response goes to an HTTP/1.1 client re-encoded (else decoded for an HTTP/1.0 one). */
  rechunk = false;
  closeAfter: boolean;
  /** Something was written to the client for this exchange (an interim or the final head). */
  wrote = false;
  /** The final response head was written to the client. */
  headSent = false;
  /** The upstream sent bytes past the end of its response: its connection is out of step. */
  stray = false;
  upPaused = false;
  /** When the client last sent body bytes, and when the upstream last sent response bytes (body timeouts). */
  lastBodyAt = performance.now();
  lastUpAt = 0;
  finished = false;
  tunnel = false;
  /** A WebSocket tunnel's frames and going away (set by its 101). */
  ws: TunnelState | null = null;

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

  get core(): ProxyCore {
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

  unwait(): void {
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
    fail(this, 502, code || (e as Error).message);
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
    fail(this, 502, "upstream left the route table");
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
      requestBodyError(this, e);
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

  toClient(b: Buffer): void {
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
      tunnelDown(this, buf);
      return;
    }
    try {
      let head: Buffer | null = null;
      if (this.res === null) {
        const r = readResponseHead(this, buf);
        if (r === null || this.tunnel || this.finished) return;
        head = r.head;
        buf = r.rest;
      }
      readResponseBody(this, buf, head);
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
      if (!this.headSent) fail(this, 502, e.message);
      else abandonBoth(this, e.message);
    }
  }

  /** A bug on the upstream side: it costs this exchange and both its connections, never the process. */
  onUpstreamError(e: unknown): void {
    this.core.log.error("proxy engine error, connection dropped", { error: (e as Error)?.stack ?? String(e) });
    abandonBoth(this, "engine error");
  }

  /** The response is complete (and, for reuse, the request too). */
  complete(): void {
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

  finish(): void {
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
      fail(this, 502, "upstream closed the connection");
      return;
    }
    if (this.resBody?.framing.kind === "close") {
      // the head went out with the first body bytes (or alone): the close is the end of the body
      this.resBody.done = true;
      this.complete();
      return;
    }
    // a response cut short: the client must not take it for a whole one
    this.core.log.warn("upstream closed the connection mid-response", { app: this.a.route.app, upstream: this.a.upstream });
    this.finish();
    this.conn.link.terminate();
  }

  /** The replica leaves (a drain's deadline): a tunnel closes cleanly; an HTTP exchange is left to finish or be cut. */
  goAway(): boolean {
    if (!this.tunnel) return false;
    goAway(this);
    return true;
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
}
