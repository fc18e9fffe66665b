/**
 * What a forwarded request is (route, replica, client) and the bookkeeping for trying it again: which methods may be
 * resent, which errors mean nothing was sent, and the attempts waiting on each replica.
 */
import type { Route } from "./route-table";
import type { ConnInfo } from "./types";

/** Methods safe to send twice (RFC 9110 9.2.2). */
export const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

/**
 * Connect errors meaning the replica never took the connection, so even a request with a body was not sent: refused,
 * or reset as the connect completed (a server that exits resets the connections still in its accept queue).
 */
export const NOT_CONNECTED = new Set(["ECONNREFUSED", "ConnectionRefused", "ECONNRESET"]);

/** Abort reason for an attempt whose replica left the route table. */
export const GONE = new Error("upstream left the route table");

/** Something that can give up on its attempt (a raw-engine exchange). */
export interface Abandonable {
  abort(reason?: unknown): void;
}

/**
 * Bodyless idempotent attempts waiting for response headers, by upstream. A stopped container's address stops
 * answering ARP, so a connect to it hangs for seconds; when the replica leaves the table those attempts are
 * abandoned and retried elsewhere instead.
 */
export class WaitingAttempts {
  private readonly byUpstream = new Map<string, Set<Abandonable>>();

  add(upstream: string, ac: Abandonable): void {
    let set = this.byUpstream.get(upstream);
    if (set === undefined) this.byUpstream.set(upstream, (set = new Set()));
    set.add(ac);
  }

  delete(upstream: string, ac: Abandonable): void {
    const set = this.byUpstream.get(upstream);
    if (set === undefined) return;
    set.delete(ac);
    if (set.size === 0) this.byUpstream.delete(upstream);
  }

  /** Abort the attempts on every upstream not in `live`; returns how many. */
  abandon(live: ReadonlySet<string>): number {
    let n = 0;
    for (const [upstream, set] of this.byUpstream) {
      if (live.has(upstream)) continue;
      for (const ac of set) {
        ac.abort(GONE);
        n++;
      }
      this.byUpstream.delete(upstream);
    }
    return n;
  }
}

export interface ForwardRequest {
  route: Route;
  /** The replica chosen first (`host:port`). */
  upstream: string;
  /** Path and query to send (`/a/b?c`). */
  target: string;
  /** Authority the client addressed, sent on as Host. */
  host: string;
  info: ConnInfo;
  /** Authority and path of the request, for finding another replica in the current table. */
  authority: string;
  path: string;
}
