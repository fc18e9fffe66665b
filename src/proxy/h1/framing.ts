/**
 * HTTP/1.1 message framing for the raw proxy engine (RFC 9112): request and response heads parsed from latin1 text,
 * and body readers that find where a body ends (Content-Length, chunked, or the connection's close) while the bytes
 * themselves are passed on untouched. Strict where a lenient parser would let two parties disagree on where a message
 * ends (request smuggling): both Content-Length and Transfer-Encoding, differing lengths, obsolete line folding and
 * bare LF line ends are refused.
 */

/** Most bytes of a head (request line and headers), as Bun.serve allows; more answers 431. */
export const MAX_HEAD_BYTES = 16 * 1024;

const CRLF2 = Buffer.from("\r\n\r\n");
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// field values: visible ASCII, obs-text, space and tab; no CR, LF or NUL
const BAD_VALUE = /[\0-\x08\x0a-\x1f\x7f]/;
const TARGET = /^[\x21-\x7e\x80-\xff]+$/;

/** Header pairs as received: lower-case names, values trimmed, repeats kept in order. */
export class HeaderList {
  constructor(readonly pairs: Array<[string, string]> = []) {}

  /** The value of `name` (lower-case), repeats joined with ", " like fetch's Headers; null when absent. */
  get(name: string): string | null {
    let out: string | null = null;
    for (const [k, v] of this.pairs) {
      if (k !== name) continue;
      out = out === null ? v : `${out}, ${v}`;
    }
    return out;
  }

  has(name: string): boolean {
    for (const [k] of this.pairs) if (k === name) return true;
    return false;
  }

  [Symbol.iterator](): Iterator<[string, string]> {
    return this.pairs[Symbol.iterator]();
  }
}

export class FramingError extends Error {
  constructor(
    readonly status: 400 | 431 | 501 | 502,
    message: string,
  ) {
    super(message);
  }
}

/** Where the head in `buf` ends (index just past the blank line), or -1 when it has not all arrived. */
export function headEnd(buf: Buffer): number {
  const i = buf.indexOf(CRLF2);
  return i < 0 ? -1 : i + 4;
}

function parseFields(lines: string[], status: 400 | 502): HeaderList {
  const pairs: Array<[string, string]> = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line === "") continue;
    const c = line.indexOf(":");
    if (c <= 0) throw new FramingError(status, "malformed header line");
    const name = line.slice(0, c);
    if (!TOKEN.test(name)) throw new FramingError(status, "invalid header name");
    const value = line.slice(c + 1).trim();
    if (BAD_VALUE.test(value)) throw new FramingError(status, "invalid header value");
    pairs.push([name.toLowerCase(), value]);
  }
  return new HeaderList(pairs);
}

function splitLines(head: string, status: 400 | 502): string[] {
  // every line must end in CRLF: a bare LF is read differently by different parsers
  const lines = head.split("\r\n");
  for (const l of lines) {
    if (l.includes("\n")) throw new FramingError(status, "bare LF in head");
    if (l.startsWith(" ") || l.startsWith("\t")) throw new FramingError(status, "obsolete line folding");
  }
  return lines;
}

export interface RequestHead {
  method: string;
  /** The request target as sent (origin-form `/p?q`, absolute-form `http://h/p`, `*` or authority-form). */
  target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  headers: HeaderList;
}

/** Parse a request head (`text` without the final blank line). */
export function parseRequestHead(text: string): RequestHead {
  const lines = splitLines(text, 400);
  const parts = lines[0].split(" ");
  if (parts.length !== 3) throw new FramingError(400, "malformed request line");
  const [method, target, version] = parts;
  if (!TOKEN.test(method)) throw new FramingError(400, "invalid method");
  if (!TARGET.test(target)) throw new FramingError(400, "invalid request target");
  if (version !== "HTTP/1.1" && version !== "HTTP/1.0")
    throw new FramingError(version.startsWith("HTTP/") ? 501 : 400, "unsupported HTTP version");
  return { method, target, minor: version === "HTTP/1.1" ? 1 : 0, headers: parseFields(lines, 400) };
}

export interface ResponseHead {
  status: number;
  reason: string;
  minor: 0 | 1;
  headers: HeaderList;
}

/** Parse a response head from an upstream (`text` without the final blank line); errors are 502s. */
export function parseResponseHead(text: string): ResponseHead {
  const lines = splitLines(text, 502);
  const line = lines[0];
  const m = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(line);
  if (m === null) throw new FramingError(502, "malformed status line");
  const reason = m[3] ?? "";
  if (BAD_VALUE.test(reason)) throw new FramingError(502, "invalid reason phrase");
  return { status: Number(m[2]), reason, minor: m[1] === "1" ? 1 : 0, headers: parseFields(lines, 502) };
}

/** How a message's body is delimited. */
export type Framing = { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" } | { kind: "close" };

function contentLength(h: HeaderList, status: 400 | 502): number | null {
  const v = h.get("content-length");
  if (v === null) return null;
  // repeated or listed values must all agree
  const values = v.split(",").map((s) => s.trim());
  if (!values.every((x) => /^\d{1,15}$/.test(x) && x === values[0])) throw new FramingError(status, "invalid Content-Length");
  return Number(values[0]);
}

function isChunked(h: HeaderList, status: 400 | 502): boolean | null {
  const te = h.get("transfer-encoding");
  if (te === null) return null;
  const codings = te.split(",").map((s) => s.trim().toLowerCase());
  if (codings.at(-1) !== "chunked") {
    // a request body whose end cannot be found is refused; a response is then read until the close
    if (status === 400) throw new FramingError(400, "unsupported Transfer-Encoding");
    return false;
  }
  if (codings.length > 1 || codings[0] !== "chunked")
    throw new FramingError(status === 400 ? 501 : 502, "unsupported Transfer-Encoding");
  return true;
}

/** The body framing of a request. */
export function requestFraming(h: HeaderList): Framing {
  const chunked = isChunked(h, 400);
  const len = contentLength(h, 400);
  if (chunked !== null && len !== null) throw new FramingError(400, "both Content-Length and Transfer-Encoding");
  if (chunked) return { kind: "chunked" };
  if (len !== null && len > 0) return { kind: "length", length: len };
  return { kind: "none" };
}

/** The body framing of a response to a request with `method`. */
export function responseFraming(method: string, status: number, h: HeaderList): Framing {
  if (method === "HEAD" || status < 200 || status === 204 || status === 304) return { kind: "none" };
  const chunked = isChunked(h, 502);
  if (chunked === true) return { kind: "chunked" };
  if (chunked === false) return { kind: "close" };
  const len = contentLength(h, 502);
  if (len !== null) return len === 0 ? { kind: "none" } : { kind: "length", length: len };
  return { kind: "close" };
}

enum Chunk {
  Size,
  Ext,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  Trailer,
  TrailerLf,
  Done,
}

/**
 * Finds where a body ends in the bytes fed to it. `feed` returns how many bytes of `buf` from `start` belong to the
 * body; once `done`, what follows belongs to the next message. Chunked bodies are checked as they pass (sizes, CRLFs,
 * trailer lines) and can hand their payload out through `onData` (to send them on unchunked).
 */
export class BodyReader {
  done: boolean;
  private remaining: number;
  private state = Chunk.Size;
  private size = 0;
  private sizeDigits = 0;
  private lineBytes = 0;

  constructor(
    readonly framing: Framing,
    private readonly onData?: (buf: Buffer, start: number, end: number) => void,
    private readonly errorStatus: 400 | 502 = 400,
  ) {
    this.done = framing.kind === "none";
    this.remaining = framing.kind === "length" ? framing.length : 0;
  }

  /** Bytes pass through as they are (no `onData`): the caller forwards what `feed` counts. */
  get passThrough(): boolean {
    return this.onData === undefined;
  }

  feed(buf: Buffer, start = 0): number {
    if (this.done) return 0;
    const f = this.framing;
    if (f.kind === "close") {
      this.onData?.(buf, start, buf.length);
      return buf.length - start;
    }
    if (f.kind === "length") {
      const n = Math.min(this.remaining, buf.length - start);
      this.remaining -= n;
      if (this.remaining === 0) this.done = true;
      this.onData?.(buf, start, start + n);
      return n;
    }
    return this.feedChunked(buf, start);
  }

  private fail(message: string): never {
    throw new FramingError(this.errorStatus, message);
  }

  private feedChunked(buf: Buffer, start: number): number {
    let i = start;
    while (i < buf.length && this.state !== Chunk.Done) {
      const b = buf[i];
      switch (this.state) {
        case Chunk.Size: {
          const d = b >= 48 && b <= 57 ? b - 48 : b >= 97 && b <= 102 ? b - 87 : b >= 65 && b <= 70 ? b - 55 : -1;
          if (d >= 0) {
            if (++this.sizeDigits > 12) this.fail("chunk size too long");
            this.size = this.size * 16 + d;
          } else if (this.sizeDigits === 0) this.fail("missing chunk size");
          else if (b === 13) this.state = Chunk.SizeLf;
          else if (b === 59 || b === 32 || b === 9) this.state = Chunk.Ext;
          else this.fail("invalid chunk size");
          i++;
          break;
        }
        case Chunk.Ext:
          if (b === 13) this.state = Chunk.SizeLf;
          else if (b === 10 || ++this.lineBytes > 4096) this.fail("invalid chunk extension");
          i++;
          break;
        case Chunk.SizeLf:
          if (b !== 10) this.fail("chunk size line without LF");
          i++;
          this.lineBytes = 0;
          this.sizeDigits = 0;
          if (this.size === 0) this.state = Chunk.Trailer;
          else {
            this.remaining = this.size;
            this.size = 0;
            this.state = Chunk.Data;
          }
          break;
        case Chunk.Data: {
          const n = Math.min(this.remaining, buf.length - i);
          this.onData?.(buf, i, i + n);
          this.remaining -= n;
          i += n;
          if (this.remaining === 0) this.state = Chunk.DataCr;
          break;
        }
        case Chunk.DataCr:
          if (b !== 13) this.fail("chunk without CRLF");
          this.state = Chunk.DataLf;
          i++;
          break;
        case Chunk.DataLf:
          if (b !== 10) this.fail("chunk without CRLF");
          this.state = Chunk.Size;
          i++;
          break;
        case Chunk.Trailer:
          // a trailer field line, or the empty line that ends the body
          if (b === 13) this.state = Chunk.TrailerLf;
          else if (b === 10 || ++this.lineBytes > MAX_HEAD_BYTES) this.fail("invalid trailer");
          i++;
          break;
        case Chunk.TrailerLf:
          if (b !== 10) this.fail("trailer line without LF");
          i++;
          if (this.lineBytes === 0) this.state = Chunk.Done;
          else {
            this.lineBytes = 0;
            this.state = Chunk.Trailer;
          }
          break;
      }
    }
    if (this.state === Chunk.Done) this.done = true;
    return i - start;
  }
}

const REASONS: Record<number, string> = {
  200: "OK",
  308: "Permanent Redirect",
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The reason phrase Sundeck sends with its own answers. */
export function reasonFor(status: number): string {
  return REASONS[status] ?? "";
}
