/**
 * One client connection of the raw engine: reads request heads, refuses what breaks the rules with a status and a
 * close, answers what the proxy answers itself, and runs one exchange at a time; requests pipelined behind it wait,
 * parsed when it ends and only while the client takes what it was sent (a client that never reads cannot make the
 * proxy queue answers). Closing lingers: the write side is shut, and what the client still sends is read and
 * dropped for a while, so its kernel does not answer our close with a reset that destroys the answer in flight.
 */
import { normalizeInfo } from "../handler";
import { connectionTokens } from "../headers";
import { errorAnswer, type LocalAnswer } from "../pages";
import { Exchange, READ_AHEAD } from "./exchange";
import { exchangeTimeouts } from "./failure";
import { type Framing, FramingError, headEnd, parseRequestHead, type RequestHead, reasonFor, requestFraming } from "./framing";
import type { ClientLink } from "./link";
import { requestTarget } from "./request-target";
import type { RawEngine } from "./server";
import { tunnelUp } from "./tunnel";
import { CONNECTION_CLOSE, serializeHead, statusLine } from "./wire";

const CRLF = 0x0a0d; // "\r\n" read as a little-endian uint16
/** How long a closing connection keeps reading (and dropping) what the client still sends. */
const LINGER_MS = 5_000;

function wantsClose(head: RequestHead): boolean {
  const tokens = connectionTokens(head.headers.get("connection"));
  if (head.minor === 0) return !tokens.includes("keep-alive");
  return tokens.includes("close");
}

/** True when `buf` has an LF not preceded by CR. */
function hasBareLf(buf: Buffer): boolean {
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) if (i === 0 || buf[i - 1] !== 13) return true;
  return false;
}

/** The request has body bytes still to come after its head. */
function hasBody(f: Framing): boolean {
  return f.kind === "chunked" || (f.kind === "length" && f.length > 0);
}

export class ClientConn {
  readonly link: ClientLink;
  /** Bytes received and not yet handled (a partial head, or requests pipelined behind the exchange). */
  buf: Buffer | null = null;
  /** When the partial head in `buf` began arriving (0: none). */
  headSince = 0;
  lastActive = performance.now();
  ex: Exchange | null = null;
  /** Closing: no more requests, input is discarded until the client closes or `closeBy`. */
  closing = false;
  private closeBy = 0;
  closed = false;
  paused = false;

  constructor(
    readonly server: RawEngine,
    link: (flowing: () => void) => ClientLink,
  ) {
    this.link = link(() => this.safely(() => this.flowing()));
  }

  /** Run `fn` for this connection; a bug costs the connection, never the process. */
  safely(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.server.opts.log.error("proxy engine error, connection dropped", { error: (e as Error)?.stack ?? String(e) });
      this.ex?.clientGone();
      this.link.terminate();
    }
  }

  /** The client took everything queued for it: go on with the exchange, or with the requests waiting. */
  private flowing(): void {
    if (this.ex !== null) this.ex.clientFlowing();
    else if (!this.closing) this.next();
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
    if (this.closing) return;
    const ex = this.ex;
    if (ex === null) {
      this.hold(chunk);
      this.next();
      return;
    }
    if (ex.tunnel) {
      tunnelUp(ex, chunk);
      return;
    }
    if (ex.reqBody.done) {
      this.hold(chunk);
      return;
    }
    const n = ex.requestBytes(chunk);
    if (n < 0) return;
    // keep what follows the body before the exchange may end (and look for the next request)
    if (n < chunk.length) this.hold(chunk.subarray(n));
    if (ex.reqBody.done) ex.requestDone();
  }

  /** Keep bytes for later; stop reading when too much waits. */
  private hold(b: Buffer): void {
    this.buf = this.buf === null ? Buffer.from(b) : Buffer.concat([this.buf, b]);
    if (this.buf.length > READ_AHEAD) this.pause();
  }

  /** Parse and start the next request in `buf`, if it has all arrived. */
  next(): void {
    const max = this.server.limits.maxHeaderBytes;
    while (this.ex === null && !this.closing && !this.closed && this.buf !== null) {
      // answers the client has not taken yet: read nothing more until it does (flowing() comes back here)
      if (this.link.blocked) {
        this.pause();
        return;
      }
      let buf = this.buf;
      // empty lines before a request line are ignored (RFC 9112 2.2), but count as the start of a head
      let skip = 0;
      while (buf.length - skip >= 2 && buf.readUInt16LE(skip) === CRLF) skip += 2;
      if (skip > 0) {
        if (this.headSince === 0) this.headSince = performance.now();
        buf = buf.subarray(skip);
        this.buf = buf.length > 0 ? buf : null;
        if (this.buf === null) break;
      }
      const end = headEnd(buf);
      if (end < 0) {
        // llhttp refuses a bare LF as soon as it sees one; waiting for a blank line would only hold the connection
        if (hasBareLf(buf)) {
          this.refuse(400, "bare LF in head");
          return;
        }
        if (buf.length > max) {
          this.refuse(431, "Request header fields too large.");
          return;
        }
        if (this.headSince === 0) this.headSince = performance.now();
        this.resume();
        return;
      }
      if (end - 4 > max) {
        this.refuse(431, "Request header fields too large.");
        return;
      }
      const text = buf.toString("latin1", 0, end - 4);
      this.buf = end < buf.length ? buf.subarray(end) : null;
      this.headSince = 0;
      const t0 = performance.now();
      try {
        this.start(parseRequestHead(text, this.server.limits.maxHeaders), t0);
      } catch (e) {
        if (!(e instanceof FramingError)) throw e;
        this.refuse(e.status, e.message);
        return;
      }
    }
    if (this.ex === null && this.buf === null && !this.closing && !this.link.blocked) this.resume();
  }

  private start(head: RequestHead, t0: number): void {
    const framing = requestFraming(head);
    const where = requestTarget(head);
    const close = wantsClose(head);
    const s = this.server;
    const early = s.opts.early?.({ method: head.method, target: where.target, host: where.authority || null });
    if (early) {
      this.answer(early, head.method, close || hasBody(framing));
      return;
    }
    const info = normalizeInfo(s.opts.info(this.link.remoteAddress, head.headers, this.link.secure));
    const r = { method: head.method, authority: where.authority, path: where.path, target: where.target, headers: head.headers };
    const a = s.opts.core.admit(r, info, t0);
    // a request answered here leaves its body unread, so the connection closes after the answer
    if ("answer" in a) {
      this.answer(a.answer, head.method, close || hasBody(framing));
      return;
    }
    const ex = new Exchange(this, head, a.forward, framing, close);
    this.ex = ex;
    // the body's first bytes may have come with the head
    const rest = this.buf;
    this.buf = null;
    if (rest !== null) this.onData(rest);
    if (this.ex === ex) ex.dial();
  }

  /** Write one of Sundeck's own answers; the connection closes after it when `close`. */
  answer(a: LocalAnswer, method: string, close: boolean): void {
    const body = Buffer.from(a.body, "utf8");
    const pairs = Object.entries(a.headers).map(([k, v]) => [k.toLowerCase(), v] as [string, string]);
    pairs.push(["content-length", String(body.length)]);
    const head = serializeHead(statusLine(a.status, reasonFor(a.status)), pairs, close ? CONNECTION_CLOSE : "");
    this.link.write(method === "HEAD" ? head : Buffer.concat([Buffer.from(head, "latin1"), body]));
    if (close) this.end();
  }

  /** Answer a request the engine will not forward, and close: what follows it cannot be trusted. */
  private refuse(status: number, message: string): void {
    this.server.opts.log.debug("request refused", { status, error: message, peer: this.link.remoteAddress });
    this.buf = null;
    this.answer(errorAnswer(status, refusalText(status)), "GET", true);
  }

  /** Close after what is queued is written, lingering: keep reading (and dropping) input until the client closes. */
  end(): void {
    if (this.closing) return;
    this.closing = true;
    this.closeBy = performance.now() + LINGER_MS;
    this.buf = null;
    this.link.end();
    this.resume();
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

  /** The periodic check: send, linger, head and idle timeouts, and the exchange's. */
  tick(now: number): void {
    const limits = this.server.limits;
    const stalled = this.link.stalledSince;
    // a client that stopped reading holds a slot and, through backpressure, an upstream connection
    if ((stalled > 0 && now - stalled > limits.sendTimeoutMs) || (this.closing && now > this.closeBy)) {
      this.link.terminate();
      return;
    }
    if (this.ex !== null) {
      exchangeTimeouts(this.ex, now);
      return;
    }
    if (this.headSince > 0 && now - this.headSince > limits.headerTimeoutMs) {
      this.link.terminate();
      return;
    }
    if (this.buf === null && now - this.lastActive > limits.idleTimeoutMs) this.end();
  }
}

/** What a refused client is told (the detail goes to the debug log only). */
function refusalText(status: number): string {
  switch (status) {
    case 431:
      return "Request header fields too large.";
    case 501:
      return "This request method or transfer coding is not supported.";
    case 505:
      return "This HTTP version is not supported.";
    default:
      return "The request was malformed.";
  }
}
