/**
 * A WebSocket that reconnects: on an unexpected close it retries with exponential backoff (1 s, doubling, capped
 * at 30 s); a clean close (1000) or `close()` ends it. It also sends a small keep-alive so the server's read
 * deadline never fires on a quiet stream.
 */

export const BACKOFF_START_MS = 1000;
export const BACKOFF_CAP_MS = 30_000;
const KEEPALIVE_MS = 45_000;

/** Delay before reconnect attempt `attempt` (0-based): 1 s, 2 s, 4 s ... capped at 30 s. */
export function backoffDelay(attempt: number): number {
  return Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** Math.max(0, attempt));
}

export type StreamStatus =
  | { state: "connecting" }
  | { state: "open" }
  | { state: "waiting"; retryInMs: number; attempt: number; code: number }
  | { state: "closed"; code: number };

/** The part of the WebSocket class this module needs (tests pass a fake). */
export interface SocketLike {
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export interface StreamOptions {
  url: string;
  /** Each frame, JSON-decoded. */
  onFrame(frame: unknown): void;
  /** Every connection change. `reconnect` is true on opens after the first. */
  onStatus?(status: StreamStatus, reconnect: boolean): void;
  /** Injected for tests. */
  createSocket?: (url: string) => SocketLike;
  timers?: {
    setTimeout: (fn: () => void, ms: number) => unknown;
    clearTimeout: (id: unknown) => void;
    setInterval: (fn: () => void, ms: number) => unknown;
    clearInterval: (id: unknown) => void;
  };
}

/** ws:// or wss:// URL of an API path on this origin. */
export function wsUrl(path: string): string {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
}

/** Open a reconnecting stream. Returns a handle whose `close()` stops it for good. */
export function openStream(opts: StreamOptions): { close(): void } {
  const create = opts.createSocket ?? ((url: string) => new WebSocket(url) as unknown as SocketLike);
  const tm = opts.timers ?? {
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (id) => clearTimeout(id as number),
    setInterval: (fn, ms) => setInterval(fn, ms),
    clearInterval: (id) => clearInterval(id as number),
  };
  let attempt = 0;
  let opened = 0;
  let stopped = false;
  let sock: SocketLike | null = null;
  let retry: unknown = null;
  let keepAlive: unknown = null;

  const status = (s: StreamStatus) => opts.onStatus?.(s, opened > 1);

  const connect = () => {
    retry = null;
    if (stopped) return;
    status({ state: "connecting" });
    const s = create(opts.url);
    sock = s;
    s.onopen = () => {
      opened++;
      status({ state: "open" });
      keepAlive = tm.setInterval(() => s.send("ping"), KEEPALIVE_MS);
    };
    s.onmessage = (ev) => {
      // a socket that delivers is healthy: the next outage starts the backoff again from 1 s
      attempt = 0;
      let frame: unknown = ev.data;
      try {
        frame = JSON.parse(String(ev.data));
      } catch {
        // not JSON: hand over the text
      }
      opts.onFrame(frame);
    };
    s.onerror = () => {
      // the close event that follows decides what happens
    };
    s.onclose = (ev) => {
      if (keepAlive !== null) tm.clearInterval(keepAlive);
      keepAlive = null;
      if (sock === s) sock = null;
      if (stopped) return;
      if (ev.code === 1000) {
        stopped = true;
        status({ state: "closed", code: ev.code });
        return;
      }
      const delay = backoffDelay(attempt);
      status({ state: "waiting", retryInMs: delay, attempt: attempt + 1, code: ev.code });
      attempt++;
      retry = tm.setTimeout(connect, delay);
    };
  };

  connect();
  return {
    close() {
      stopped = true;
      if (retry !== null) tm.clearTimeout(retry);
      if (keepAlive !== null) tm.clearInterval(keepAlive);
      sock?.close(1000, "closed by client");
      sock = null;
    },
  };
}
