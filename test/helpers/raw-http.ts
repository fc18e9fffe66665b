/**
 * Raw TCP ends for proxy conformance tests: an upstream that records the exact bytes of every request it receives
 * (head text, raw body, decoded body) and answers with canned bytes, and a client that writes bytes and reads what
 * comes back. Nothing here is lenient: a request it cannot frame is recorded as an error.
 */
import type { Socket } from "bun";

export interface RecordedRequest {
  /** Which upstream connection carried it (1, 2, ...). */
  conn: number;
  /** The head as received, without the blank line. */
  head: string;
  /** Header lines as [lower-case name, value]. */
  headers: Array<[string, string]>;
  /** The body bytes as received (chunked framing included). */
  raw: string;
  /** The body after chunked decoding. */
  body: string;
}

export interface RawUpstream {
  port: number;
  addr: string;
  requests: RecordedRequest[];
  /** Framing problems seen in what the proxy sent. */
  errors: string[];
  /** Connections open now, and accepted in all. */
  open: number;
  accepted: number;
  stop(): void;
}

/** What to answer a request with: bytes to write, more bytes 50 ms `later`, and whether to close. null: nothing. */
export type Reply = { bytes: string | Buffer; close?: boolean; delayMs?: number; later?: string | Buffer } | null;

const OK: Reply = { bytes: "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok" };

/** The end of a chunked body starting at `i`, and its decoded payload; null while incomplete. */
function chunkedEnd(buf: string, i: number): { end: number; body: string } | null {
  let body = "";
  for (;;) {
    const eol = buf.indexOf("\r\n", i);
    if (eol < 0) return null;
    const size = Number.parseInt(buf.slice(i, eol), 16);
    if (!/^[0-9a-f]+$/.test(buf.slice(i, eol)) || Number.isNaN(size))
      throw new Error(`bad chunk size line ${JSON.stringify(buf.slice(i, eol))}`);
    if (size === 0) {
      if (buf.length < eol + 4) return null;
      if (buf.slice(eol + 2, eol + 4) !== "\r\n") throw new Error("trailer or junk after the last chunk");
      return { end: eol + 4, body };
    }
    if (buf.length < eol + 2 + size + 2) return null;
    body += buf.slice(eol + 2, eol + 2 + size);
    if (buf.slice(eol + 2 + size, eol + 4 + size) !== "\r\n") throw new Error("chunk without CRLF");
    i = eol + 4 + size;
  }
}

/** An upstream on 127.0.0.1 that records requests and answers each with `reply(request)` (200 "ok" by default). */
export function rawUpstream(reply: (r: RecordedRequest) => Reply = () => OK): RawUpstream {
  const self = { requests: [] as RecordedRequest[], errors: [] as string[], open: 0, accepted: 0 } as RawUpstream;
  let ids = 0;
  type Data = { id: number; buf: string };
  const listener = Bun.listen<Data>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        self.open++;
        self.accepted++;
        s.data = { id: ++ids, buf: "" };
      },
      data(s, chunk) {
        s.data.buf += Buffer.from(chunk).toString("latin1");
        try {
          drain(s);
        } catch (e) {
          self.errors.push((e as Error).message);
          s.end();
        }
      },
      close() {
        self.open--;
      },
      error() {},
    },
  });

  function drain(s: Socket<Data>): void {
    for (;;) {
      const buf = s.data.buf;
      const he = buf.indexOf("\r\n\r\n");
      if (he < 0) return;
      const head = buf.slice(0, he);
      const headers = head
        .split("\r\n")
        .slice(1)
        .map((l) => {
          const c = l.indexOf(":");
          return [l.slice(0, c).toLowerCase(), l.slice(c + 1).trim()] as [string, string];
        });
      const te = headers.filter(([k]) => k === "transfer-encoding");
      const cl = headers.filter(([k]) => k === "content-length");
      if (te.length + cl.length > 1) throw new Error(`ambiguous framing: ${JSON.stringify(headers)}`);
      let end = he + 4;
      let body = "";
      if (te.length === 1) {
        if (te[0][1] !== "chunked") throw new Error(`transfer-encoding ${te[0][1]}`);
        const c = chunkedEnd(buf, end);
        if (c === null) return;
        body = c.body;
        end = c.end;
      } else if (cl.length === 1) {
        const n = Number(cl[0][1]);
        if (buf.length < end + n) return;
        body = buf.slice(end, end + n);
        end += n;
      }
      const r = { conn: s.data.id, head, headers, raw: buf.slice(he + 4, end), body };
      s.data.buf = buf.slice(end);
      self.requests.push(r);
      const answer = reply(r);
      if (answer === null) continue;
      const send = () => {
        s.write(answer.bytes);
        if (answer.later !== undefined) setTimeout(() => s.write(answer.later!), 50);
        if (answer.close) s.end();
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    }
  }

  self.port = listener.port;
  self.addr = `127.0.0.1:${listener.port}`;
  self.stop = () => listener.stop(true);
  return self;
}

export interface RawReply {
  /** Everything received, latin1. */
  text: string;
  /** The proxy closed the connection (rather than the wait ending). */
  closed: boolean;
  /** The close was a reset (ECONNRESET) rather than an orderly end. */
  reset: boolean;
}

/**
 * Write `parts` to 127.0.0.1:`port` (each after `gapMs`), then read until the proxy closes the connection, `until`
 * says the text is complete, or `waitMs` passes.
 */
export async function rawRequest(
  port: number,
  parts: Array<string | Buffer>,
  o: { until?: (text: string) => boolean; waitMs?: number; gapMs?: number } = {},
): Promise<RawReply> {
  let text = "";
  let closed = false;
  let reset = false;
  let wake: () => void = () => {};
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, d) {
        text += Buffer.from(d).toString("latin1");
        wake();
      },
      close() {
        closed = true;
        wake();
      },
      error(_s, e) {
        if ((e as { code?: string }).code === "ECONNRESET") reset = true;
      },
      connectError() {
        closed = true;
      },
    },
  });
  for (let i = 0; i < parts.length; i++) {
    if (i > 0 && o.gapMs) await Bun.sleep(o.gapMs);
    sock.write(parts[i]);
  }
  const deadline = Date.now() + (o.waitMs ?? 3000);
  while (!closed && !(o.until?.(text) ?? false) && Date.now() < deadline) {
    await new Promise<void>((r) => {
      wake = r;
      setTimeout(r, Math.max(1, Math.min(50, deadline - Date.now())));
    });
  }
  sock.end();
  return { text, closed, reset };
}

/**
 * The complete responses (status line, head, Content-Length body) in `text`. `methods` are the requests' methods in
 * order (a response to HEAD has no body); 1xx responses are listed too and take no request.
 */
export function responses(text: string, methods: string[] = []): Array<{ status: number; head: string; body: string }> {
  const out: Array<{ status: number; head: string; body: string }> = [];
  let i = 0;
  for (;;) {
    const he = text.indexOf("\r\n\r\n", i);
    if (he < 0) return out;
    const head = text.slice(i, he);
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? "0");
    const len = /\r\ncontent-length: *(\d+)/i.exec(head);
    const bodyless =
      status < 200 || status === 204 || status === 304 || methods[out.filter((r) => r.status >= 200).length] === "HEAD";
    const n = bodyless || len === null ? 0 : Number(len[1]);
    if (text.length < he + 4 + n) return out;
    out.push({ status, head, body: text.slice(he + 4, he + 4 + n) });
    i = he + 4 + n;
  }
}
