/**
 * Upstream connections of the raw engine: Bun.connect sockets on the event loop's own thread, kept alive between
 * requests per replica (`host:port`). An idle socket is closed after IDLE_S (shorter than the keep-alive timeouts of
 * common app servers, so the upstream rarely closes one as it is reused); one that still closes under a request before
 * any response byte is reported as `stale` so the request can be sent again on a fresh connection.
 */
import type { Socket } from "bun";
import { Outbox } from "./outbox";

/** Seconds an idle upstream connection is kept. */
const IDLE_S = 4;
/** Idle connections kept per replica. */
const MAX_IDLE = 256;

/** What an upstream socket reports to the request using it. */
export interface UpstreamUser {
  onUpstreamData(buf: Buffer): void;
  onUpstreamDrain(): void;
  onUpstreamClose(): void;
}

export interface UpstreamData {
  addr: string;
  user: UpstreamUser | null;
  out: Outbox;
  /** Requests this connection has carried (1 while serving its first). */
  uses: number;
}

export type UpstreamSocket = Socket<UpstreamData>;

const handlers = {
  binaryType: "buffer" as const,
  data(s: UpstreamSocket, buf: Buffer) {
    // bytes on an idle connection belong to no request: the connection is out of step, drop it
    if (s.data.user === null) s.terminate();
    else s.data.user.onUpstreamData(buf);
  },
  drain(s: UpstreamSocket) {
    s.data.out.drain();
    s.data.user?.onUpstreamDrain();
  },
  close(s: UpstreamSocket) {
    const user = s.data.user;
    s.data.user = null;
    pools.get(s.data.addr)?.forget(s);
    user?.onUpstreamClose();
  },
  timeout(s: UpstreamSocket) {
    if (s.data.user === null) s.end();
  },
  error() {},
};

class ReplicaPool {
  readonly idle: UpstreamSocket[] = [];

  forget(s: UpstreamSocket): void {
    const i = this.idle.indexOf(s);
    if (i >= 0) this.idle.splice(i, 1);
  }
}

const pools = new Map<string, ReplicaPool>();

/** `host:port` (or `[v6]:port`) -> the parts Bun.connect wants. */
function splitAddr(addr: string): { hostname: string; port: number } {
  const i = addr.lastIndexOf(":");
  let host = addr.slice(0, i);
  if (host.startsWith("[")) host = host.slice(1, -1);
  return { hostname: host, port: Number(addr.slice(i + 1)) };
}

/** An idle connection to `addr`, or null. */
export function takeIdle(addr: string, user: UpstreamUser): UpstreamSocket | null {
  const pool = pools.get(addr);
  for (;;) {
    const s = pool?.idle.pop();
    if (s === undefined) return null;
    if (s.readyState !== 1) continue;
    s.data.user = user;
    s.data.uses++;
    s.timeout(0);
    return s;
  }
}

/** A new connection to `addr`; rejects with the connect error (its `code`, e.g. ECONNREFUSED). */
export async function connectUpstream(addr: string, user: UpstreamUser): Promise<UpstreamSocket> {
  const { hostname, port } = splitAddr(addr);
  const data = { addr, user, uses: 1 } as UpstreamData;
  const s = await Bun.connect<UpstreamData>({ hostname, port, data, socket: handlers });
  data.out = new Outbox(s as Socket<unknown>, () => {});
  s.setNoDelay(true);
  return s;
}

/** Give a connection whose exchange ended cleanly back for reuse. */
export function release(s: UpstreamSocket): void {
  s.data.user = null;
  if (s.readyState !== 1 || s.data.out.blocked) {
    s.terminate();
    return;
  }
  let pool = pools.get(s.data.addr);
  if (pool === undefined) pools.set(s.data.addr, (pool = new ReplicaPool()));
  if (pool.idle.length >= MAX_IDLE) {
    s.end();
    return;
  }
  s.timeout(IDLE_S);
  pool.idle.push(s);
}

/** Drop a connection that cannot be reused (its user gets no close callback). */
export function discard(s: UpstreamSocket): void {
  s.data.user = null;
  s.terminate();
}
