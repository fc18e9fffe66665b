/**
 * A WebSocket upgrade in the raw engine: which requests ask for one, and the tunnel an upstream's 101 opens, where
 * bytes pass both ways untouched until either side closes, or until the replica leaves (a rolling deploy's drain
 * deadline): then the client gets a Close frame 1001 between two frames and the tunnel ends once it answers.
 */
import { connectionTokens, responseHeaderPairs } from "../headers";
import type { Exchange } from "./exchange";
import type { Framing, RequestHead, ResponseHead } from "./framing";
import { discard } from "./pool";
import { serializeHead, statusLine } from "./wire";
import { FrameBoundaries, GOING_AWAY_FRAME } from "./ws-frames";

/** Silence after which a tunnel's sockets send TCP keep-alive probes. */
const TUNNEL_KEEPALIVE_MS = 60_000;

/**
 * A leaving replica's tunnel: how long a frame in progress may take to end before the tunnel is cut, and how long
 * the client has to answer the Close frame before its connection is ended anyway.
 */
const AWAY_GRACE_MS = 1000;

/** The frames of a tunnel both ways, and where its going away stands. */
export interface TunnelState {
  down: FrameBoundaries;
  up: FrameBoundaries;
  /** "boundary": waiting for the upstream's frame in progress to end; "sent": the Close went to the client. */
  away: "no" | "boundary" | "sent";
  /** The client's Close frames before ours went out (its answer is the next one). */
  closesBefore: number;
  timer: ReturnType<typeof setTimeout> | null;
}

/** A WebSocket handshake: a bodyless GET asking to upgrade to websocket. */
export function isUpgrade(head: RequestHead, framing: Framing): boolean {
  if (head.method !== "GET" || framing.kind !== "none") return false;
  const u = head.headers.get("upgrade");
  if (u === null || u.toLowerCase() !== "websocket") return false;
  return connectionTokens(head.headers.get("connection")).includes("upgrade");
}

/** The upstream accepted the upgrade: pass its 101 on and turn the exchange into a tunnel. */
export function startTunnel(ex: Exchange, head: ResponseHead, rest: Buffer): void {
  ex.tunnel = true;
  // a tunnel has no timeout of its own (apps ping, or not); keep-alive probes find a peer that vanished
  ex.conn.link.keepAlive(TUNNEL_KEEPALIVE_MS);
  ex.up?.setKeepAlive(true, TUNNEL_KEEPALIVE_MS);
  ex.deadline = 0;
  ex.unwait();
  ex.core.record(ex.a, 101);
  ex.wrote = true;
  ex.headSent = true;
  ex.toClient(
    Buffer.from(
      serializeHead(statusLine(101, head.reason || "Switching Protocols"), responseHeaderPairs(head.headers, false, true)),
      "latin1",
    ),
  );
  ex.ws = { down: new FrameBoundaries(), up: new FrameBoundaries(), away: "no", closesBefore: 0, timer: null };
  if (rest.length > 0) tunnelDown(ex, rest);
  // frames the client sent after its handshake
  const held = ex.conn.buf;
  ex.conn.buf = null;
  if (held !== null) tunnelUp(ex, held);
  ex.conn.resume();
}

/** Upstream bytes of a tunnel, to the client (up to the Close frame once the replica leaves). */
export function tunnelDown(ex: Exchange, buf: Buffer): void {
  const ws = ex.ws!;
  if (ws.away === "no") {
    ws.down.feed(buf);
    ex.toClient(buf);
    return;
  }
  if (ws.away === "sent") return;
  const i = ws.down.feed(buf, true);
  if (i > 0) ex.toClient(i === buf.length ? buf : buf.subarray(0, i));
  if (ws.down.atBoundary) sendAway(ex);
}

/** Client bytes of a tunnel, to the upstream; once the Close went out, only the client's answer to it matters. */
export function tunnelUp(ex: Exchange, chunk: Buffer): void {
  const ws = ex.ws!;
  ws.up.feed(chunk);
  if (ws.away !== "sent") ex.toUpstream(chunk);
  else if (ws.up.closes > ws.closesBefore) endAway(ex);
}

/** The tunnel's replica leaves: close it cleanly at the next frame boundary of what the upstream sends. */
export function goAway(ex: Exchange): void {
  const ws = ex.ws;
  if (ws === null || ex.finished || ws.away !== "no") return;
  ws.away = "boundary";
  if (ws.down.atBoundary) {
    sendAway(ex);
    return;
  }
  // a frame that does not end within the grace is cut with the connection (the old behaviour, now the exception)
  ws.timer = setTimeout(() => {
    if (ex.finished || ws.away !== "boundary") return;
    if (ex.up !== null) discard(ex.up);
    ex.finish();
    ex.conn.link.terminate();
  }, AWAY_GRACE_MS);
}

function sendAway(ex: Exchange): void {
  const ws = ex.ws!;
  if (ws.timer !== null) clearTimeout(ws.timer);
  ws.away = "sent";
  ws.closesBefore = ws.up.closes;
  ex.toClient(GOING_AWAY_FRAME);
  // the replica is leaving: nothing more is read from it or sent to it
  const up = ex.up;
  ex.up = null;
  if (up !== null) {
    up.data.user = null;
    up.end();
  }
  ex.conn.resume();
  ws.timer = setTimeout(() => endAway(ex), AWAY_GRACE_MS);
}

/** The client answered the Close (or took too long to): end its connection after what was written. */
function endAway(ex: Exchange): void {
  const ws = ex.ws!;
  if (ws.timer !== null) clearTimeout(ws.timer);
  ws.timer = null;
  if (ex.finished) return;
  ex.finish();
  ex.conn.end();
}
