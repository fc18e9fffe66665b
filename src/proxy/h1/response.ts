/**
 * An upstream's response in the raw engine: the head (interim responses passed on to HTTP/1.1 clients, the final one
 * re-framed by the engine, a 101 handed to the tunnel) and the body, passed through or decoded and re-chunked.
 */
import { responseHeaderPairs } from "../headers";
import { BodyReader, encodeChunks } from "./body";
import type { Exchange } from "./exchange";
import { FramingError, headEnd, parseResponseHead, type ResponseHead, responseFraming } from "./framing";
import { startTunnel } from "./tunnel";
import { CONNECTION_CLOSE, serializeHead, statusLine } from "./wire";

/** Most bytes of an upstream response head. */
const MAX_RESPONSE_HEAD = 64 * 1024;
/** Most header fields of an upstream response head. */
const MAX_RESPONSE_HEADERS = 500;
/** Largest first body part copied to leave in one write with the response head. */
const JOIN_MAX = 16 * 1024;

/**
 * Take in response head bytes; returns the client's head and the bytes after the upstream's, or null while it is
 * incomplete (or when it was an interim response, a tunnel, or the end of the exchange).
 */
export function readResponseHead(ex: Exchange, chunk: Buffer): { head: Buffer; rest: Buffer } | null {
  let buf = ex.resBuf === null ? chunk : Buffer.concat([ex.resBuf, chunk]);
  for (;;) {
    const end = headEnd(buf);
    if (end < 0) {
      if (buf.length > MAX_RESPONSE_HEAD) throw new FramingError(502, "response head too large");
      ex.resBuf = Buffer.from(buf);
      return null;
    }
    ex.resBuf = null;
    const head = parseResponseHead(buf.toString("latin1", 0, end - 4), MAX_RESPONSE_HEADERS);
    const rest = buf.subarray(end);
    if (head.status === 101) {
      if (!ex.upgrade) throw new FramingError(502, "unexpected 101");
      startTunnel(ex, head, rest);
      return null;
    }
    if (head.status < 200) {
      // 100 Continue, 103 Early Hints: passed on to HTTP/1.1 clients (HTTP/1.0 has no interim responses)
      if (ex.head.minor === 1) {
        ex.wrote = true;
        ex.toClient(
          Buffer.from(serializeHead(statusLine(head.status, head.reason), responseHeaderPairs(head.headers, false)), "latin1"),
        );
      }
      buf = rest;
      if (buf.length === 0) return null;
      continue;
    }
    return { head: finalHead(ex, head), rest };
  }
}

/** Take in the final response head; returns the head for the client, with the engine's own framing. */
function finalHead(ex: Exchange, head: ResponseHead): Buffer {
  const method = ex.head.method;
  // may refuse the response: before anything about it is taken in
  const { framing, metaLength } = responseFraming(method, head.status, head);
  ex.res = head;
  ex.deadline = 0;
  ex.unwait();
  const client11 = ex.head.minor === 1;
  const chunked = framing.kind === "chunked";
  ex.rechunk = chunked && client11;
  ex.resBody = new BodyReader(
    framing,
    chunked ? (b, s, e) => ex.resParts.push(b.subarray(s, e)) : undefined,
    502,
    ex.conn.server.limits,
  );
  if (framing.kind === "close" || !client11) ex.closeAfter = true;
  let extra = "";
  if (framing.kind === "length") extra = `content-length: ${framing.length}\r\n`;
  else if (metaLength !== null) extra = `content-length: ${metaLength}\r\n`;
  else if (ex.rechunk) extra = "transfer-encoding: chunked\r\n";
  if (ex.closeAfter) extra += CONNECTION_CLOSE;
  const hsts = ex.a.info.secure && ex.a.route.tls !== "off";
  return Buffer.from(
    serializeHead(statusLine(head.status, head.reason), responseHeaderPairs(head.headers, hsts), extra),
    "latin1",
  );
}

/** The final head is on its way to the client: count the response. */
function sentHead(ex: Exchange): void {
  ex.headSent = true;
  ex.wrote = true;
  const f = ex.resBody!.framing;
  ex.core.record(ex.a, ex.res!.status, f.kind === "length" ? f.length : undefined);
}

/**
 * Pass response body bytes on, after the client's head when this chunk completed it (one write for both).
 * Content-Length and close-delimited bodies pass as they are; chunked ones are decoded and, for an HTTP/1.1
 * client, re-encoded.
 */
export function readResponseBody(ex: Exchange, buf: Buffer, head: Buffer | null): void {
  const body = ex.resBody!;
  let n = 0;
  if (buf.length > 0 && !body.done) n = body.feed(buf);
  let out: Buffer | null = null;
  if (body.passThrough) {
    if (n > 0) out = n === buf.length ? buf : buf.subarray(0, n);
  } else if (ex.resParts.length > 0 || (body.done && ex.rechunk)) {
    const parts = ex.resParts;
    ex.resParts = [];
    out = ex.rechunk ? encodeChunks(parts, body.done) : parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }
  if (head !== null) {
    sentHead(ex);
    // one write for a small response (one TCP segment); a large first part is not worth copying to join the head
    if (out !== null && out.length > JOIN_MAX) ex.toClient(head);
    else out = out === null ? head : Buffer.concat([head, out]);
  }
  if (out !== null) ex.toClient(out);
  // bytes after the end of the response: the upstream connection is out of step
  if (n < buf.length) ex.stray = true;
  if (body.done) ex.complete();
}
