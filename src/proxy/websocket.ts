/**
 * WebSocket proxying. The upstream is dialled first (so a dead replica answers 502 and the subprotocol it picks is
 * the one the client gets), then the client is upgraded; frames are piped both ways, text and binary, with anything
 * arriving before the other side is ready queued, and a close on either side closes the other with its code.
 */
import type { Server, ServerWebSocket, WebSocketHandler } from "bun";
import type { Log } from "../log/logger";
import { errorPage } from "./pages";

/** Close codes an endpoint may send: 1000-1014 except 1004-1006, and 3000-4999. */
export function sendableCloseCode(code: number | undefined): number {
  if (code === undefined || code === 1005) return 1000;
  if (code === 1006 || code === 1015) return 1011;
  if ((code >= 1000 && code <= 1014 && (code < 1004 || code > 1006)) || (code >= 3000 && code <= 4999)) return code;
  return 1011;
}

/** A close reason cut to the 123 bytes a close frame can carry. */
export function closeReason(reason: string | undefined): string {
  if (!reason) return "";
  let r = reason;
  while (Buffer.byteLength(r) > 123) r = r.slice(0, -1);
  return r;
}

type Frame = string | ArrayBuffer | Uint8Array;

/** State of one proxied socket pair. */
export interface WsPair {
  upstream: WebSocket;
  client: ServerWebSocket<WsPair> | null;
  /** Upstream frames that came before the client socket opened. */
  queue: Frame[];
  /** The upstream closed before the client socket opened. */
  upstreamClosed: { code: number; reason: string } | null;
  clientClosed: boolean;
}

export interface WsProxyOptions {
  log: Log;
  /** Most ms to wait for the upstream handshake. */
  connectMs: number;
  /** Most bytes buffered toward the upstream before the pair is closed (client -> upstream backpressure). */
  maxBuffered?: number;
}

const OPEN = 1;

/** The WebSocket side of the proxy: `dial` in the fetch path, `handlers` for Bun.serve's `websocket`. */
export function createWsProxy(o: WsProxyOptions) {
  const maxBuffered = o.maxBuffered ?? 16 * 1024 * 1024;

  /**
   * Dial `url` with `headers` and the client's requested subprotocols, then upgrade the client. Resolves undefined
   * when upgraded, else an error page.
   */
  async function dial(req: Request, server: Server<unknown>, url: string, headers: Headers): Promise<Response | undefined> {
    const protocols = (req.headers.get("sec-websocket-protocol") ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean);
    let upstream: WebSocket;
    try {
      upstream = new WebSocket(url, { headers: Object.fromEntries(headers), protocols } as unknown as string[]);
    } catch (e) {
      o.log.warn("websocket upstream could not be dialled", { url, error: (e as Error).message });
      return errorPage(502, "The app could not be reached. Please try again in a moment.");
    }
    upstream.binaryType = "arraybuffer";
    const pair: WsPair = { upstream, client: null, queue: [], upstreamClosed: null, clientClosed: false };
    upstream.onmessage = (e: MessageEvent) => {
      if (pair.client) pair.client.send(e.data as string | ArrayBuffer);
      else if (!pair.clientClosed) pair.queue.push(e.data as Frame);
    };
    upstream.onclose = (e: CloseEvent) => {
      if (pair.client) pair.client.close(sendableCloseCode(e.code), closeReason(e.reason));
      else pair.upstreamClosed = { code: e.code, reason: e.reason };
    };
    const opened = await new Promise<"open" | "failed" | "timeout">((resolve) => {
      const timer = setTimeout(() => resolve("timeout"), o.connectMs);
      upstream.onopen = () => {
        clearTimeout(timer);
        resolve("open");
      };
      upstream.onerror = () => {
        clearTimeout(timer);
        resolve("failed");
      };
    });
    upstream.onerror = null;
    if (opened !== "open") {
      try {
        upstream.close();
      } catch {
        // already closed
      }
      o.log.warn("websocket upstream did not open", { url, result: opened });
      return opened === "timeout"
        ? errorPage(504, "The app did not answer in time. Please try again.")
        : errorPage(502, "The app could not be reached. Please try again in a moment.");
    }
    const chosen = upstream.protocol;
    const upgraded = server.upgrade(req, {
      data: pair,
      headers: chosen ? { "sec-websocket-protocol": chosen } : undefined,
    });
    if (!upgraded) {
      upstream.close(1011);
      return errorPage(400, "This request could not be upgraded to a WebSocket.");
    }
    return undefined;
  }

  const handlers: WebSocketHandler<WsPair> = {
    // proxied apps decide what is too big; Bun's own limits keep memory bounded
    maxPayloadLength: 16 * 1024 * 1024,
    backpressureLimit: 16 * 1024 * 1024,
    closeOnBackpressureLimit: true,
    idleTimeout: 300,
    open(ws) {
      const pair = ws.data;
      pair.client = ws;
      for (const frame of pair.queue) ws.send(frame);
      pair.queue = [];
      if (pair.upstreamClosed) ws.close(sendableCloseCode(pair.upstreamClosed.code), closeReason(pair.upstreamClosed.reason));
    },
    message(ws, message) {
      const up = ws.data.upstream;
      if (up.readyState !== OPEN) return;
      if (up.bufferedAmount > maxBuffered) {
        ws.close(1013, "upstream is not keeping up");
        return;
      }
      up.send(message);
    },
    close(ws, code, reason) {
      const pair = ws.data;
      pair.client = null;
      pair.clientClosed = true;
      const up = pair.upstream;
      if (up.readyState <= OPEN) up.close(sendableCloseCode(code), closeReason(reason));
    },
  };

  return { dial, handlers };
}
