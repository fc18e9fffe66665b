/**
 * One HTTP/2 request forwarded upstream over the raw engine's HTTP/1.1 pool, and its response as a fetch Response for
 * the h2 terminator (terminator.ts). As in the HTTP/1.1 engine, the upstream request carries Sundeck's own framing:
 * Content-Length when the client declared one (Bun's h2 checks it against the DATA it received), chunked when a body
 * comes without one, nothing when the stream ended with its headers; no client framing or connection header is ever
 * copied. The response body streams through a pull-based ReadableStream: the upstream socket is paused while the
 * stream's queue is full (the client's h2 flow control window holds it), and resumed when the stream is read.
 */
import { IDEMPOTENT, NOT_CONNECTED } from "../attempts";
import { BodyReader, encodeChunks } from "../h1/body";
import { FramingError, headEnd, parseResponseHead, type ResponseHead, responseFraming } from "../h1/framing";
import type { EngineLimits } from "../h1/limits";
import { discard, type UpstreamPool, type UpstreamSocket, type UpstreamUser } from "../h1/pool";
import { serializeHead } from "../h1/wire";
import type { Admitted, ProxyCore } from "../handler";
import { connectionTokens, HSTS_VALUE, headerOptions, responseHeaderPairs, upstreamHeaderPairs } from "../headers";
import { errorAnswer } from "../pages";
import { answerResponse, bodyFraming } from "./messages";

/** Most bytes of an upstream response head (as the HTTP/1.1 engine). */
const MAX_RESPONSE_HEAD = 64 * 1024;
/** Request body bytes held before the upstream gets the request head (so a body refused early sends nothing). */
const BODY_HOLD = 64 * 1024;
/** Response bytes queued toward the client before the upstream is paused. */
const QUEUE_BYTES = 64 * 1024;

export interface ForwardDeps {
  core: ProxyCore;
  pool: UpstreamPool;
  limits: EngineLimits;
}

/** Forward `req` (admitted as `a`) and resolve with the upstream's response, or Sundeck's own error answer. */
export function forward(d: ForwardDeps, req: Request, a: Admitted): Promise<Response> {
  return new Promise<Response>((resolve) => new H2Exchange(d, req, a, resolve).dial());
}

class H2Exchange implements UpstreamUser {
  private up: UpstreamSocket | null = null;
  private readonly head: string;
  private readonly bodyless: boolean;
  private readonly chunked: boolean;
  private readonly idempotent: boolean;
  /** The body length the client declared (null: none, chunked upstream). */
  private readonly declared: number | null;
  private resBuf: Buffer | null = null;
  private res: ResponseHead | null = null;
  private resBody: BodyReader | null = null;
  private resParts: Buffer[] = [];
  private ctl: ReadableStreamDefaultController<Uint8Array> | null = null;
  private paused = false;
  private retried = false;
  private reqDone = false;
  private stray = false;
  private finished = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private resolved = false;

  constructor(
    private readonly d: ForwardDeps,
    private readonly req: Request,
    private readonly a: Admitted,
    private readonly resolve: (r: Response) => void,
  ) {
    const f = bodyFraming(req);
    this.bodyless = f.bodyless;
    this.chunked = f.line.startsWith("transfer-encoding");
    this.idempotent = IDEMPOTENT.has(req.method);
    const cl = req.headers.get("content-length");
    this.declared = cl === null ? null : Number(cl);
    const pairs = upstreamHeaderPairs(req.headers, headerOptions(a, d.core.proxyToken, f.bodyless));
    this.head = serializeHead(`${req.method} ${a.target} HTTP/1.1`, pairs, f.line);
    req.signal.addEventListener("abort", () => this.clientGone(), { once: true });
  }

  dial(): void {
    if (this.finished) return;
    if (this.timer === null) this.timer = setTimeout(() => this.fail(504, "no response headers in time"), this.d.core.headersMs);
    const addr = this.a.upstream;
    const idle = this.d.pool.take(addr, this);
    if (idle !== null) {
      this.send(idle);
      return;
    }
    this.d.pool.connect(addr, this).then(
      (s) => {
        if (this.finished || this.a.upstream !== addr) discard(s);
        else this.send(s);
      },
      (e) => {
        if (this.finished) return;
        const code = (e as { code?: string })?.code ?? "";
        if (this.idempotent && NOT_CONNECTED.has(code) && this.reroute()) return;
        this.fail(502, code || String(e));
      },
    );
  }

  /** Another replica, once; true when the request went to it. */
  private reroute(): boolean {
    if (this.retried) return false;
    const next = this.d.core.reroute(this.a.authority, this.a.path, this.a.upstream);
    if (next === null) return false;
    this.retried = true;
    this.a.upstream = next;
    this.dial();
    return true;
  }

  private send(s: UpstreamSocket): void {
    this.up = s;
    if (this.bodyless) {
      s.data.out.write(this.head);
      this.reqDone = true;
      return;
    }
    void this.pumpBody(s);
  }

  /**
   * Copy the client's DATA to the upstream, chunk-encoded when it declared no length, waiting while the upstream is
   * blocked. The head goes out with the first BODY_HOLD bytes (or the whole body, when smaller): a body that ends
   * short of its content-length, or is reset, within them sends nothing upstream at all; past them, the upstream
   * gets a body cut short and a closed connection. Never a byte past the declared length.
   */
  private async pumpBody(s: UpstreamSocket): Promise<void> {
    const body = this.req.body;
    const out = s.data.out;
    if (body === null) {
      out.write(this.head);
      if (this.chunked) out.write(encodeChunks([], true));
      this.reqDone = true;
      return;
    }
    const reader = body.getReader();
    let sent = 0;
    let held: Buffer[] | null = [];
    /** Write (or hold) bytes already in the upstream framing. */
    const put = (framed: Buffer) => {
      if (held === null) out.write(framed);
      else held.push(framed);
    };
    const release = () => {
      if (held === null) return;
      out.write(this.head);
      for (const b of held) out.write(b);
      held = null;
    };
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (this.finished || this.up !== s) return;
        if (done) break;
        if (value.length === 0) continue;
        sent += value.length;
        // a byte past the declared length would be the start of another request on the upstream connection
        if (this.declared !== null && sent > this.declared) {
          reader.cancel().catch(() => {});
          this.abandon("request body longer than its content-length");
          return;
        }
        const b = Buffer.from(value.buffer, value.byteOffset, value.length);
        put(this.chunked ? encodeChunks([b], false) : b);
        if (sent > BODY_HOLD) release();
        while (out.blocked && !this.finished && this.up === s) await this.drained();
      }
      if (this.declared !== null && sent !== this.declared) {
        this.abandon("request body shorter than its content-length");
        return;
      }
      if (this.chunked) put(encodeChunks([], true));
      release();
      this.reqDone = true;
      if (this.resBody?.done) this.complete();
    } catch {
      // the client reset its stream (or Bun refused its DATA): the upstream cannot tell where the body ends
      if (!this.finished) this.abandon("request body aborted");
    }
  }

  private drainWaiter: (() => void) | null = null;
  private drained(): Promise<void> {
    return new Promise((r) => {
      this.drainWaiter = r;
    });
  }

  onUpstreamDrain(): void {
    const w = this.drainWaiter;
    this.drainWaiter = null;
    w?.();
  }

  onUpstreamData(buf: Buffer): void {
    if (this.finished) return;
    try {
      if (this.res === null) {
        const all = this.resBuf === null ? buf : Buffer.concat([this.resBuf, buf]);
        const end = headEnd(all);
        if (end < 0) {
          if (all.length > MAX_RESPONSE_HEAD) throw new FramingError(502, "response head too large");
          this.resBuf = Buffer.from(all);
          return;
        }
        this.resBuf = null;
        const head = parseResponseHead(all.toString("latin1", 0, end - 4), 500);
        const rest = all.subarray(end);
        if (head.status === 101) throw new FramingError(502, "unexpected 101");
        // interim responses (100, 103) are not passed on over h2 here
        if (head.status < 200) {
          if (rest.length > 0) this.onUpstreamData(rest);
          return;
        }
        this.start(head);
        buf = rest;
      }
      this.body(buf);
    } catch (e) {
      if (!(e instanceof FramingError)) throw e;
      this.d.core.log.warn("upstream sent a malformed response", { app: this.a.route.app, error: e.message });
      if (this.res === null || !this.resolved) this.fail(502, e.message);
      else this.abandon(e.message);
    }
  }

  /** The final head: the client's Response, with the body to stream. */
  private start(head: ResponseHead): void {
    const { framing } = responseFraming(this.req.method, head.status, head);
    this.res = head;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.resBody = new BodyReader(
      framing,
      framing.kind === "chunked" ? (b, s, e) => this.resParts.push(b.subarray(s, e)) : undefined,
      502,
      this.d.limits,
    );
    const hsts = this.a.info.secure && this.a.route.tls !== "off";
    const headers = new Headers();
    for (const [k, v] of responseHeaderPairs(head.headers, hsts)) headers.append(k, v);
    this.d.core.record(this.a, head.status, framing.kind === "length" ? framing.length : undefined);
    const bodyless = this.req.method === "HEAD" || this.resBody.done;
    if (framing.kind === "length" && framing.length > 0) headers.set("content-length", String(framing.length));
    const stream = bodyless
      ? null
      : new ReadableStream<Uint8Array>(
          {
            start: (c) => {
              this.ctl = c;
            },
            pull: () => {
              if (this.paused && this.up !== null) {
                this.paused = false;
                this.up.resume();
              }
            },
            cancel: () => this.clientGone(),
          },
          { highWaterMark: QUEUE_BYTES, size: (chunk) => chunk?.byteLength ?? 0 },
        );
    this.settle(new Response(stream, { status: head.status, headers }));
  }

  private body(buf: Buffer): void {
    const rb = this.resBody!;
    let n = 0;
    if (buf.length > 0 && !rb.done) n = rb.feed(buf);
    let out: Buffer | null = null;
    if (rb.passThrough) {
      if (n > 0) out = n === buf.length ? buf : buf.subarray(0, n);
    } else if (this.resParts.length > 0) {
      out = this.resParts.length === 1 ? this.resParts[0] : Buffer.concat(this.resParts);
      this.resParts = [];
    }
    if (n < buf.length) this.stray = true;
    if (out !== null && out.length > 0 && this.ctl !== null) {
      // no copy: Bun hands every socket read a buffer of its own (h1/outbox.ts; runtime.test.ts holds Bun to it)
      this.ctl.enqueue(out);
      if ((this.ctl.desiredSize ?? 1) <= 0 && this.up !== null && !this.paused) {
        this.paused = true;
        this.up.pause();
      }
    }
    if (rb.done) this.complete();
  }

  private complete(): void {
    if (this.finished) return;
    const up = this.up;
    this.finish();
    try {
      this.ctl?.close();
    } catch {}
    if (up === null) return;
    const res = this.res!;
    const reusable =
      this.reqDone &&
      !this.stray &&
      res.minor === 1 &&
      this.resBody!.framing.kind !== "close" &&
      !connectionTokens(res.headers.get("connection")).includes("close");
    if (reusable) {
      if (this.paused) up.resume();
      this.d.pool.release(up);
    } else discard(up);
  }

  onUpstreamClose(): void {
    if (this.finished) return;
    const reused = (this.up?.data.uses ?? 1) > 1;
    this.up = null;
    if (this.res === null) {
      if (this.idempotent && this.bodyless && reused && !this.retried) {
        // a kept-alive connection the upstream closed as the request went out: once more on a fresh one
        this.retried = true;
        this.resBuf = null;
        this.dial();
        return;
      }
      this.fail(502, "upstream closed the connection");
      return;
    }
    if (this.resBody?.framing.kind === "close") {
      this.resBody.done = true;
      this.complete();
      return;
    }
    this.abandon("upstream closed the connection mid-response");
  }

  onUpstreamError(e: unknown): void {
    this.d.core.log.error("proxy engine error (h2), stream reset", { error: (e as Error)?.stack ?? String(e) });
    this.abandon("engine error");
  }

  /** Sundeck's own answer while nothing of the response went out; a reset stream after. */
  private fail(status: 502 | 504, error: string): void {
    if (this.finished) return;
    this.d.core.log.warn(status === 504 ? "upstream sent no response headers in time" : "upstream request failed", {
      app: this.a.route.app,
      upstream: this.a.upstream,
      error,
    });
    if (this.resolved) {
      this.abandon(error);
      return;
    }
    if (this.up !== null) discard(this.up);
    this.finish();
    const hsts = this.a.info.secure && this.a.route.tls !== "off";
    const message =
      status === 504
        ? "The app did not answer in time. Please try again."
        : "The app could not be reached. Please try again in a moment.";
    this.d.core.record(this.a, status);
    this.settle(
      answerResponse(errorAnswer(status, message, hsts ? { "strict-transport-security": HSTS_VALUE } : {}), this.req.method),
    );
  }

  /** A response cut short: the client's stream is reset, never ended as if whole. */
  private abandon(why: string): void {
    const up = this.up;
    this.finish();
    if (up !== null) discard(up);
    if (!this.resolved) {
      this.settle(
        answerResponse(errorAnswer(502, "The app could not be reached. Please try again in a moment."), this.req.method),
      );
      return;
    }
    try {
      this.ctl?.error(new Error(why));
    } catch {}
  }

  private clientGone(): void {
    if (this.finished) return;
    const up = this.up;
    this.finish();
    if (up !== null) discard(up);
  }

  private finish(): void {
    this.finished = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.up = null;
    this.onUpstreamDrain();
  }

  private settle(r: Response): void {
    if (this.resolved) return;
    this.resolved = true;
    this.resolve(r);
  }
}
