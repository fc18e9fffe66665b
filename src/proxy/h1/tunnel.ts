/**
 * A WebSocket upgrade in the raw engine: which requests ask for one, and the tunnel an upstream's 101 opens, where
 * bytes pass both ways untouched until either side closes.
 */
import { connectionTokens, responseHeaderPairs } from "../headers";
import type { Exchange } from "./exchange";
import type { Framing, RequestHead, ResponseHead } from "./framing";
import { serializeHead, statusLine } from "./wire";

/** Silence after which a tunnel's sockets send TCP keep-alive probes. */
const TUNNEL_KEEPALIVE_MS = 60_000;

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
  if (rest.length > 0) ex.toClient(rest);
  // frames the client sent after its handshake
  const held = ex.conn.buf;
  ex.conn.buf = null;
  if (held !== null) ex.toUpstream(held);
  ex.conn.resume();
}
