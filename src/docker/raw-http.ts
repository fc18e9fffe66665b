/**
 * A plain HTTP/1.1 GET over the engine's socket with the response body as a stream (chunked or sized), for large
 * downloads. Why not fetch: Bun's fetch over a unix socket reads a chunked body at about 20-30 MB/s here (a 256 MiB
 * container archive took 15 s against 1 s for curl and 1.7 s for node:net), which would make volume backups crawl.
 * Backpressure: the socket is paused while the stream's queue is full.
 */
import { connect, type Socket } from "node:net";
import type { EngineTransport } from "./transport";
import { EngineError } from "./types";

const HEAD_CAP = 64 * 1024;

/** Open a connection to the engine (unix socket or TCP). `allowHalfOpen` keeps reading after our side ends. */
export function openSocket(http: EngineTransport): Socket {
  if (http.target.socketPath) return connect({ path: http.target.socketPath, allowHalfOpen: true });
  const u = new URL(http.target.baseUrl);
  return connect({ host: u.hostname, port: Number(u.port || 2375), allowHalfOpen: true });
}

/** GET `path` (with the version prefix) and stream the body; a non-2xx answer throws EngineError with its message. */
export async function rawGet(http: EngineTransport, path: string, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>> {
  const full = `/v${await http.apiVersion()}${path}`;
  const socket = openSocket(http);
  const body = new BodyDecoder();
  let head: Buffer | null = Buffer.alloc(0);
  let ctrl!: ReadableStreamDefaultController<Uint8Array>;
  let settle!: { ok: (v: ReadableStream<Uint8Array>) => void; fail: (e: unknown) => void };
  const answered = new Promise<ReadableStream<Uint8Array>>((ok, fail) => {
    settle = { ok, fail };
  });
  let status = 0;
  let errorText = "";
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        ctrl = c;
      },
      pull() {
        socket.resume();
      },
      cancel() {
        socket.destroy();
      },
    },
    { highWaterMark: 4 },
  );
  const finish = (e?: unknown) => {
    signal?.removeEventListener("abort", onAbort);
    if (status === 0) return settle.fail(e ?? new EngineError(502, `engine closed the connection on GET ${path.split("?")[0]}`));
    if (status >= 300) {
      return settle.fail(new EngineError(status, messageOf(errorText) || `GET ${path.split("?")[0]} answered ${status}`));
    }
    try {
      if (e) ctrl.error(e);
      else if (!body.done && body.mode !== "close") ctrl.error(new EngineError(502, "engine ended the response early"));
      else ctrl.close();
    } catch {}
  };
  const onAbort = () => socket.destroy(new DOMException("request aborted", "AbortError"));
  const deliver = (data: Uint8Array) => {
    if (status >= 300) {
      errorText = (errorText + new TextDecoder().decode(data)).slice(0, HEAD_CAP);
      return;
    }
    ctrl.enqueue(data);
    if ((ctrl.desiredSize ?? 1) <= 0) socket.pause();
  };
  socket.on("data", (chunk: Buffer) => {
    if (head) {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > HEAD_CAP) socket.destroy(new EngineError(502, "engine sent an oversized response head"));
        return;
      }
      const text = head.subarray(0, end).toString("latin1");
      const rest = head.subarray(end + 4);
      head = null;
      status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 502);
      body.configure(text);
      if (status < 300) settle.ok(stream);
      chunk = rest;
    }
    try {
      body.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength), deliver);
    } catch (e) {
      return socket.destroy(e as Error);
    }
    if (body.done) {
      socket.destroy();
      finish();
    }
  });
  socket.on("end", () => finish());
  socket.on("error", (e) => finish(signal?.aborted ? e : http.connectionError(e, signal)));
  socket.on("close", () => finish());
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort, { once: true });
  socket.write(`GET ${full} HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n`);
  return answered;
}

/** Decodes a response body: `Transfer-Encoding: chunked`, a Content-Length, or until the connection closes. */
export class BodyDecoder {
  mode: "chunked" | "length" | "close" = "close";
  private left = 0;
  /** chunked: "size" (reading a size line), "data", "crlf" (after data), "trailer" */
  private state: "size" | "data" | "crlf" | "trailer" = "size";
  private line = "";
  done = false;

  /** Read the framing from the response head. */
  configure(head: string): void {
    if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) this.mode = "chunked";
    else {
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (m) {
        this.mode = "length";
        this.left = Number(m[1]);
        this.done = this.left === 0;
      }
    }
  }

  push(chunk: Uint8Array, deliver: (data: Uint8Array) => void): void {
    if (this.done) return;
    if (this.mode === "close") {
      if (chunk.length) deliver(chunk);
      return;
    }
    if (this.mode === "length") {
      const n = Math.min(this.left, chunk.length);
      if (n) deliver(chunk.subarray(0, n));
      this.left -= n;
      this.done = this.left === 0;
      return;
    }
    let at = 0;
    while (at < chunk.length && !this.done) {
      if (this.state === "data") {
        const n = Math.min(this.left, chunk.length - at);
        deliver(chunk.subarray(at, at + n));
        at += n;
        this.left -= n;
        if (this.left === 0) this.state = "crlf";
        continue;
      }
      // size, crlf and trailer states read lines
      const nl = chunk.indexOf(10, at);
      const end = nl < 0 ? chunk.length : nl;
      this.line += new TextDecoder("latin1").decode(chunk.subarray(at, end));
      if (this.line.length > 1024) throw new EngineError(502, "engine sent a malformed chunked body");
      at = end;
      if (nl < 0) break;
      at++;
      const line = this.line.replace(/\r$/, "");
      this.line = "";
      if (this.state === "crlf") {
        if (line !== "") throw new EngineError(502, "engine sent a malformed chunked body");
        this.state = "size";
      } else if (this.state === "size") {
        const size = Number.parseInt(line.split(";")[0].trim(), 16);
        if (!Number.isFinite(size) || size < 0) throw new EngineError(502, "engine sent a malformed chunk size");
        if (size === 0) this.state = "trailer";
        else {
          this.left = size;
          this.state = "data";
        }
      } else if (line === "") this.done = true;
    }
  }
}

/** The engine's error message out of a JSON or plain body. */
export function messageOf(text: string): string {
  const t = text.trim();
  try {
    return String(JSON.parse(t)?.message ?? t).trim();
  } catch {
    return t;
  }
}
