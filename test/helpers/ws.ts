/** A WebSocket test client that records frames and the close, with waits instead of sleeps. */
import { until } from "./http";

export interface WsProbe {
  ws: WebSocket;
  frames: unknown[];
  pings: number;
  closed: { code: number; reason: string } | null;
  /** Wait until `pred` holds for the frames so far. */
  waitFor(pred: (frames: unknown[]) => boolean, timeout?: number): Promise<void>;
  waitClose(timeout?: number): Promise<{ code: number; reason: string }>;
}

/** Open a socket to `url` (http base + path) with optional cookie/bearer/origin. */
export function openWs(
  base: string,
  path: string,
  opts: { cookie?: string; bearer?: string; origin?: string | null } = {},
): Promise<WsProbe> {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.cookie = `session=${opts.cookie}`;
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.origin !== null) headers.origin = opts.origin ?? base;
  const ws = new WebSocket(base.replace(/^http/, "ws") + path, { headers } as any);
  const probe: WsProbe = {
    ws,
    frames: [],
    pings: 0,
    closed: null,
    async waitFor(pred, timeout = 5000) {
      await until(() => pred(probe.frames), { timeout, what: "websocket frames" });
    },
    waitClose: (timeout = 5000) => until(() => probe.closed, { timeout, what: "websocket close" }),
  };
  ws.addEventListener("message", (e) => probe.frames.push(JSON.parse(String(e.data))));
  ws.addEventListener("ping" as any, () => probe.pings++);
  ws.addEventListener("close", (e) => (probe.closed = { code: e.code, reason: e.reason }));
  return new Promise((resolve, reject) => {
    ws.addEventListener("open", () => resolve(probe));
    ws.addEventListener("error", () =>
      probe.closed
        ? resolve(probe)
        : setTimeout(() => (probe.closed ? resolve(probe) : reject(new Error("websocket failed to open"))), 200),
    );
  });
}
