/**
 * One HTTP/1.1 request to one already-checked IP address, written and read by hand on a node:net or node:tls socket,
 * so the address connected to is exactly the one the policy approved (no resolver runs here) while SNI, certificate
 * checks and Host still use the URL's name. Every phase has a deadline; the response body is read up to a cap and the
 * socket is then closed. Redirects are reported, never followed.
 */
import net from "node:net";
import tls from "node:tls";

/** Where to connect and what name the TLS session is for (null: no SNI, the certificate must name the IP). */
export interface ExchangeTarget {
  address: string;
  port: number;
  tls: boolean;
  servername: string | null;
}

/** Deadlines in milliseconds, each from the start of its phase; `totalMs` bounds the whole exchange. */
export interface ExchangeLimits {
  totalMs: number;
  /** The overall deadline the timeout message names, when `totalMs` is what is left of it (default `totalMs`). */
  deadlineMs?: number;
  connectMs: number;
  tlsMs: number;
  headersMs: number;
  maxBodyBytes: number;
  /** Extra trusted CA certificates in PEM (tests); the system roots otherwise. */
  ca?: string[];
}

/** Where an exchange stopped. `connect` failures may be retried on another address of the same name. */
export type Phase = "connect" | "tls" | "response" | "body";

/** What came back: a response head (and the start of its body), or an error in some phase. */
export type ExchangeOutcome =
  | { kind: "response"; status: number; body: string }
  | { kind: "error"; phase: Phase; error: string; timeout: boolean };

/** Response heads past this size are refused: a receiver has no reason to send more. */
const MAX_HEAD_BYTES = 16 * 1024;
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})(?: [^\r\n]*)?$/;
const CRLF2 = Buffer.from("\r\n\r\n");

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** A socket error in a few plain words, never a stack. */
function describe(e: NodeJS.ErrnoException, phase: Phase): string {
  const words: Record<string, string> = {
    ECONNREFUSED: "connection refused",
    ECONNRESET: "connection reset",
    EHOSTUNREACH: "host unreachable",
    ENETUNREACH: "network unreachable",
    EPIPE: "connection closed while sending",
  };
  if (e.code && words[e.code]) return words[e.code];
  const what = (e.message || e.code || "error").replace(/[\r\n]+/g, " ").slice(0, 200);
  return phase === "tls" ? `tls handshake failed: ${what}` : what;
}

/** The status of a complete response head, or null while more bytes are needed. Throws on a malformed head. */
function parseHead(head: string): { status: number; length: number | null; chunked: boolean } {
  const lines = head.split("\r\n");
  const m = STATUS_LINE.exec(lines[0]);
  if (!m) throw new Error("malformed response status line");
  let length: number | null = null;
  let chunked = false;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new Error("malformed response header");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-length" && /^\d{1,15}$/.test(value)) length = Number(value);
    if (name === "transfer-encoding" && /chunked/i.test(value)) chunked = true;
  }
  return { status: Number(m[1]), length: chunked ? null : length, chunked };
}

/** The data of a chunked body read so far, leniently: it only feeds an error message. */
function dechunk(raw: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  while (at < raw.length) {
    const eol = raw.indexOf("\r\n", at);
    if (eol < 0) break;
    const size = Number.parseInt(raw.subarray(at, eol).toString("latin1"), 16);
    if (!Number.isFinite(size) || size <= 0) break;
    out.push(raw.subarray(eol + 2, Math.min(raw.length, eol + 2 + size)));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** Send `request` (a complete HTTP/1.1 message) to `target` and read the answer. Never rejects. */
export function exchange(target: ExchangeTarget, request: Uint8Array, limits: ExchangeLimits): Promise<ExchangeOutcome> {
  return new Promise((resolve) => {
    let phase: Phase = "connect";
    let done = false;
    let buf = Buffer.alloc(0);
    let head: ReturnType<typeof parseHead> | null = null;
    const timers: ReturnType<typeof setTimeout>[] = [];
    const socket: net.Socket = target.tls
      ? tls.connect({
          host: target.address,
          port: target.port,
          servername: target.servername ?? undefined,
          ca: limits.ca,
          rejectUnauthorized: true,
          ALPNProtocols: ["http/1.1"],
        })
      : net.connect({ host: target.address, port: target.port });

    const finish = (out: ExchangeOutcome) => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      socket.destroy();
      resolve(out);
    };
    const fail = (error: string, timeout = false) => finish({ kind: "error", phase, error, timeout });
    const answer = () => {
      const raw = buf.subarray(0, limits.maxBodyBytes);
      const body = head?.chunked ? dechunk(raw) : raw;
      finish({ kind: "response", status: head!.status, body: body.toString("utf8") });
    };
    const within = (ms: number, only: Phase, message: string) =>
      timers.push(
        setTimeout(() => {
          if (phase === only) fail(message, true);
        }, ms),
      );

    timers.push(
      setTimeout(
        () => (phase === "body" ? answer() : fail(`timed out after ${seconds(limits.deadlineMs ?? limits.totalMs)}`, true)),
        limits.totalMs,
      ),
    );
    within(limits.connectMs, "connect", `connect timed out after ${seconds(limits.connectMs)}`);

    const send = () => {
      phase = "response";
      within(limits.headersMs, "response", `no response headers within ${seconds(limits.headersMs)}`);
      socket.write(request);
    };
    socket.once("connect", () => {
      if (!target.tls) return send();
      phase = "tls";
      within(limits.tlsMs, "tls", `tls handshake timed out after ${seconds(limits.tlsMs)}`);
    });
    if (target.tls) socket.once("secureConnect", send);

    socket.on("data", (chunk: Buffer) => {
      if (done) return;
      buf = Buffer.concat([buf, chunk]);
      while (phase === "response") {
        const end = buf.indexOf(CRLF2);
        if (end < 0) {
          if (buf.length > MAX_HEAD_BYTES) fail("response head too large");
          return;
        }
        if (end > MAX_HEAD_BYTES) return fail("response head too large");
        try {
          head = parseHead(buf.subarray(0, end).toString("latin1"));
        } catch (e) {
          return fail((e as Error).message);
        }
        buf = buf.subarray(end + 4);
        // an interim answer (100, 103) comes before the real one
        if (head.status >= 100 && head.status < 200 && head.status !== 101) continue;
        phase = "body";
      }
      if (phase !== "body" || !head) return;
      const complete = head.length !== null ? buf.length >= head.length : head.chunked && buf.includes("0\r\n\r\n");
      if (complete || head.status === 204 || head.status === 304 || buf.length >= limits.maxBodyBytes) answer();
    });
    socket.on("end", () => (phase === "body" ? answer() : fail("connection closed before a response")));
    socket.on("close", () => (phase === "body" ? answer() : fail("connection closed before a response")));
    socket.on("error", (e: NodeJS.ErrnoException) => (phase === "body" ? answer() : fail(describe(e, phase))));
  });
}
