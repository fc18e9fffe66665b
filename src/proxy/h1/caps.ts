/**
 * Client connection caps, shared by every listener of the proxy: connections open at once in total and per peer
 * address (per /64 for IPv6, the block one subscriber gets). A connection past a cap is closed at once, before any
 * TLS handshake or request is read; refusals are logged at most every 10 s with their count.
 */
import { ipBytes, normalizeIp } from "../../lib/net";
import type { Log } from "../../log/logger";

const REFUSAL_LOG_MS = 10_000;

/** What a peer counts as: its IPv4 address, or its IPv6 /64. */
function peerKey(peer: string): string {
  const ip = normalizeIp(peer);
  if (!ip.includes(":")) return ip;
  const b = ipBytes(ip);
  return b === null ? ip : `${Buffer.from(b.subarray(0, 8)).toString("hex")}::/64`;
}

export interface CapsOptions {
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** Peers exempt from the per-address cap (trusted proxies carry many clients). */
  exempt?: (peer: string) => boolean;
  log: Log;
}

export class ConnectionCaps {
  private open = 0;
  private readonly perPeer = new Map<string, number>();
  private refused = 0;
  private loggedAt = Number.NEGATIVE_INFINITY;
  /** Connections refused since start. */
  refusedTotal = 0;

  constructor(private readonly o: CapsOptions) {}

  /** Connections counted now. */
  get size(): number {
    return this.open;
  }

  /** Count a new connection from `peer` if the caps allow it; false means close it at once. */
  reserve(peer: string): boolean {
    const key = peerKey(peer);
    const n = this.perPeer.get(key) ?? 0;
    const overPeer = n >= this.o.maxConnectionsPerIp && !(this.o.exempt?.(normalizeIp(peer)) ?? false);
    if (this.open >= this.o.maxConnections || overPeer) {
      this.refusal(key);
      return false;
    }
    this.open++;
    this.perPeer.set(key, n + 1);
    return true;
  }

  /** A connection counted by `reserve` closed. */
  release(peer: string): void {
    const key = peerKey(peer);
    this.open--;
    const n = (this.perPeer.get(key) ?? 1) - 1;
    if (n <= 0) this.perPeer.delete(key);
    else this.perPeer.set(key, n);
  }

  private refusal(peer: string): void {
    this.refused++;
    this.refusedTotal++;
    const now = performance.now();
    if (now - this.loggedAt < REFUSAL_LOG_MS) return;
    this.loggedAt = now;
    this.o.log.warn("client connections refused: connection limit reached", {
      refused: this.refused,
      open: this.open,
      max_connections: this.o.maxConnections,
      max_connections_per_ip: this.o.maxConnectionsPerIp,
      peer,
    });
    this.refused = 0;
  }
}
