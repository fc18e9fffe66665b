/**
 * HTTP/1.1 message heads for the raw proxy engine (RFC 9110, RFC 9112): request and response heads parsed strictly
 * from latin1 text, and the framing of each body. The engine never forwards Content-Length, Transfer-Encoding or
 * Connection as received; it writes its own from what is decided here. Every rule is at least as strict as llhttp
 * (Node's parser) wherever a message boundary depends on it, so no app behind the proxy can read a request the proxy
 * did not see; test/integration/proxy/differential.test.ts holds it against llhttp and docs/proxy.md lists the rules.
 */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// field values: VCHAR, obs-text, SP and HTAB between them; no CR, LF, NUL, other controls or DEL
const BAD_VALUE = /[\0-\x08\x0a-\x1f\x7f]/;
// request targets: visible ASCII without '#' (a fragment is never part of a request); llhttp refuses bytes past 0x7e
const TARGET = /^[\x21-\x22\x24-\x7e]+$/;
const DIGITS = /^\d{1,15}$/;

/**
 * Request methods the proxy forwards: RFC 9110's (CONNECT and TRACE left out), PATCH, WebDAV's and PURGE. Anything
 * else answers 501.
 */
export const METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "OPTIONS",
  "PATCH",
  "PURGE",
  "PROPFIND",
  "PROPPATCH",
  "MKCOL",
  "COPY",
  "MOVE",
  "LOCK",
  "UNLOCK",
  "SEARCH",
  "REPORT",
  "MKACTIVITY",
  "CHECKOUT",
  "MERGE",
  "MKCALENDAR",
  "ACL",
  "BIND",
  "REBIND",
  "UNBIND",
  "LINK",
  "UNLINK",
]);

/** Header pairs as received: lower-case names, values without their surrounding SP/HTAB, repeats kept in order. */
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

  /** Every value of `name` (lower-case), one per field line. */
  all(name: string): string[] {
    const out: string[] = [];
    for (const [k, v] of this.pairs) if (k === name) out.push(v);
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

/** A message the engine refuses; `status` is what the client is answered (4xx, 5xx for a request; 502 upstream). */
export class FramingError extends Error {
  constructor(
    readonly status: 400 | 408 | 431 | 501 | 502 | 505,
    message: string,
  ) {
    super(message);
  }
}

const CRLF2 = Buffer.from("\r\n\r\n");

/** Where the head in `buf` ends (index just past the blank line), or -1 when it has not all arrived. */
export function headEnd(buf: Buffer): number {
  const i = buf.indexOf(CRLF2);
  return i < 0 ? -1 : i + 4;
}

/** Strip SP and HTAB (and nothing else: VT, FF or NBSP are not whitespace in HTTP) from both ends. */
function trimOws(s: string, from: number): string {
  let a = from;
  let b = s.length;
  while (a < b && (s.charCodeAt(a) === 32 || s.charCodeAt(a) === 9)) a++;
  while (b > a && (s.charCodeAt(b - 1) === 32 || s.charCodeAt(b - 1) === 9)) b--;
  return s.slice(a, b);
}

/** One field line (`name: value`), or a FramingError with `status`. */
export function parseField(line: string, status: 400 | 502): [string, string] {
  const c = line.indexOf(":");
  if (c <= 0) throw new FramingError(status, "malformed header line");
  const name = line.slice(0, c);
  if (!TOKEN.test(name)) throw new FramingError(status, "invalid header name");
  const value = trimOws(line, c + 1);
  if (BAD_VALUE.test(value)) throw new FramingError(status, "invalid header value");
  const lower = name.toLowerCase();
  // llhttp refuses a tab after a framing value (a space is fine); so must we, or the two would frame it differently
  if ((lower === "content-length" || lower === "transfer-encoding") && line.charCodeAt(line.length - 1) === 9)
    throw new FramingError(status, `invalid ${lower}`);
  return [lower, value];
}

function parseFields(lines: string[], status: 400 | 502, maxHeaders: number): HeaderList {
  if (lines.length - 1 > maxHeaders) throw new FramingError(status === 400 ? 431 : 502, "too many header fields");
  const pairs: Array<[string, string]> = [];
  for (let i = 1; i < lines.length; i++) pairs.push(parseField(lines[i], status));
  return new HeaderList(pairs);
}

function splitLines(head: string, status: 400 | 502): string[] {
  // every line must end in CRLF: a bare LF is read differently by different parsers
  const lines = head.split("\r\n");
  for (const l of lines) {
    if (l.includes("\n")) throw new FramingError(status, "bare LF in head");
    const c = l.charCodeAt(0);
    if (c === 32 || c === 9) throw new FramingError(status, "obsolete line folding");
  }
  return lines;
}

export interface RequestHead {
  method: string;
  /** The request target as sent (origin-form `/p?q` or absolute-form `http://h/p`). */
  target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  headers: HeaderList;
}

/** The HTTP version of a request line: 0 or 1, else a FramingError (505 for other versions, 400 for junk). */
function requestVersion(v: string): 0 | 1 {
  if (v === "HTTP/1.1") return 1;
  if (v === "HTTP/1.0") return 0;
  throw new FramingError(/^HTTP\/\d\.\d$/.test(v) ? 505 : 400, "unsupported HTTP version");
}

/** Parse a request head (`text` without the final blank line). */
export function parseRequestHead(text: string, maxHeaders = Number.POSITIVE_INFINITY): RequestHead {
  const lines = splitLines(text, 400);
  const parts = lines[0].split(" ");
  if (parts.length !== 3) throw new FramingError(400, "malformed request line");
  const [method, target, version] = parts;
  const minor = requestVersion(version);
  if (!TOKEN.test(method)) throw new FramingError(400, "invalid method");
  if (!METHODS.has(method)) throw new FramingError(501, "method not supported");
  if (!TARGET.test(target)) throw new FramingError(400, "invalid request target");
  return { method, target, minor, headers: parseFields(lines, 400, maxHeaders) };
}

export interface ResponseHead {
  status: number;
  reason: string;
  minor: 0 | 1;
  headers: HeaderList;
}

/** Parse a response head from an upstream (`text` without the final blank line); errors are 502s. */
export function parseResponseHead(text: string, maxHeaders = Number.POSITIVE_INFINITY): ResponseHead {
  const lines = splitLines(text, 502);
  const m = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: (.*))?$/.exec(lines[0]);
  if (m === null) throw new FramingError(502, "malformed status line");
  const reason = m[3] ?? "";
  if (BAD_VALUE.test(reason)) throw new FramingError(502, "invalid reason phrase");
  return { status: Number(m[2]), reason, minor: m[1] === "1" ? 1 : 0, headers: parseFields(lines, 502, maxHeaders) };
}

/** How a message's body is delimited. A `length` of 0 is a body that is complete at once. */
export type Framing = { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" } | { kind: "close" };

/** The one Content-Length of a message: null when absent; several field lines or a list are refused, as llhttp does. */
function contentLength(h: HeaderList, status: 400 | 502): number | null {
  const values = h.all("content-length");
  if (values.length === 0) return null;
  if (values.length > 1) throw new FramingError(status, "more than one Content-Length");
  if (!DIGITS.test(values[0])) throw new FramingError(status, "invalid Content-Length");
  return Number(values[0]);
}

/** True when the message is chunked; any other transfer coding (or more than one) is refused. */
function chunked(h: HeaderList, minor: 0 | 1, status: 400 | 502): boolean {
  const values = h.all("transfer-encoding");
  if (values.length === 0) return false;
  if (minor === 0) throw new FramingError(status, "Transfer-Encoding in an HTTP/1.0 message");
  if (h.has("content-length")) throw new FramingError(status, "both Content-Length and Transfer-Encoding");
  if (values.length === 1 && values[0].toLowerCase() === "chunked") return true;
  const listed = values.join(",").split(",");
  const codings = listed.every((c) => TOKEN.test(trimOws(c, 0)));
  throw new FramingError(status === 400 && codings ? 501 : status, "unsupported Transfer-Encoding");
}

/** The body framing of a request; Content-Length 0 is `length` 0 (forwarded as such). */
export function requestFraming(head: RequestHead): Framing {
  if (chunked(head.headers, head.minor, 400)) return { kind: "chunked" };
  const len = contentLength(head.headers, 400);
  return len === null ? { kind: "none" } : { kind: "length", length: len };
}

/** A response's framing, and the Content-Length to pass on with a bodyless answer to HEAD or a 304. */
export interface ResponseFraming {
  framing: Framing;
  /** The representation's length for HEAD and 304 answers (RFC 9110 8.6), null otherwise. */
  metaLength: number | null;
}

/** The body framing of a response with `status` to a request with `method`. */
export function responseFraming(method: string, status: number, head: Pick<ResponseHead, "minor" | "headers">): ResponseFraming {
  const isChunked = chunked(head.headers, head.minor, 502);
  const len = contentLength(head.headers, 502);
  if (method === "HEAD" || status === 304) return { framing: { kind: "none" }, metaLength: len };
  if (status < 200 || status === 204) return { framing: { kind: "none" }, metaLength: null };
  if (isChunked) return { framing: { kind: "chunked" }, metaLength: null };
  if (len !== null) return { framing: { kind: "length", length: len }, metaLength: null };
  return { framing: { kind: "close" }, metaLength: null };
}

const REASONS: Record<number, string> = {
  200: "OK",
  308: "Permanent Redirect",
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
};

/** The reason phrase Sundeck sends with its own answers. */
export function reasonFor(status: number): string {
  return REASONS[status] ?? "";
}
