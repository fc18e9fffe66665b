/**
 * Upstream connections of the raw engine: Bun.connect sockets on the event loop's own thread, kept alive between
 * requests per replica (`host:port`). An idle socket is closed after `idleMs` (shorter than the keep-alive timeouts of
 * common app servers, so the upstream rarely closes one as it is reused); one that still closes under a request before
 * any response byte lets the request be sent again on a fresh connection. Bytes on an idle connection mean it is out
 * of step: it is dropped, never reused.
 */
import type { Socket } from "bun";
import { Outbox } from "./outbox";

/** What an upstream socket reports to the request using it. */
export interface UpstreamUser {
  onUpstreamData(buf: Buffer): void;
  onUpstreamDrain(): void;
  onUpstreamClose(): void;
  /** A callback above threw: a bug, which must cost this exchange only. */
  onUpstreamError(e: unknown): void;
  /** The replica is leaving (a drain's deadline passed): a WebSocket tunnel closes cleanly; whether it is one. */
  goAway?(): boolean;
}

export interface UpstreamData {
  addr: string;
  user: UpstreamUser | null;
  out: Outbox;
  /** Requests this connection has carried (1 while serving its first). */
  uses: number;
  pool: UpstreamPool;
}

export type UpstreamSocket = Socket<UpstreamData>;

/** Run a user's callback; what it throws goes back to it as an error, never into Bun's socket loop. */
function guarded(user: UpstreamUser | null, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    user?.onUpstreamError(e);
  }
}

const handlers = {
  binaryType: "buffer" as const,
  data(s: UpstreamSocket, buf: Buffer) {
    const user = s.data.user;
    if (user === null) s.terminate();
    else guarded(user, () => user.onUpstreamData(buf));
  },
  drain(s: UpstreamSocket) {
    s.data.out.drain();
    const user = s.data.user;
    if (user !== null) guarded(user, () => user.onUpstreamDrain());
  },
  close(s: UpstreamSocket) {
    const user = s.data.user;
    s.data.user = null;
    s.data.pool.closed(s);
    if (user !== null) guarded(user, () => user.onUpstreamClose());
  },
  timeout(s: UpstreamSocket) {
    if (s.data.user === null) s.end();
  },
  error() {},
};

/** `host:port` (or `[v6]:port`) -> the parts Bun.connect wants. */
function splitAddr(addr: string): { hostname: string; port: number } {
  const i = addr.lastIndexOf(":");
  let host = addr.slice(0, i);
  if (host.startsWith("[")) host = host.slice(1, -1);
  return { hostname: host, port: Number(addr.slice(i + 1)) };
}

/** The upstream connections of one engine: open ones counted, idle ones kept per replica. */
export class UpstreamPool {
  private readonly idle = new Map<string, UpstreamSocket[]>();
  private open = 0;
  /** Connections open per replica (in use, idle or connecting). */
  private readonly perAddr = new Map<string, number>();
  /** Connected sockets per replica (in use or idle). */
  private readonly live = new Map<string, Set<UpstreamSocket>>();

  constructor(private readonly o: { idleMs: number; maxIdle: number }) {}

  /** Upstream connections open now (in use, idle, or still connecting). */
  get size(): number {
    return this.open;
  }

  /** An idle connection to `addr`, or null. */
  take(addr: string, user: UpstreamUser): UpstreamSocket | null {
    const list = this.idle.get(addr);
    for (;;) {
      const s = list?.pop();
      if (s === undefined) return null;
      if (s.readyState !== 1) continue;
      s.data.user = user;
      s.data.uses++;
      s.timeout(0);
      return s;
    }
  }

  /** A new connection to `addr`; rejects with the connect error (its `code`, e.g. ECONNREFUSED). */
  async connect(addr: string, user: UpstreamUser): Promise<UpstreamSocket> {
    const { hostname, port } = splitAddr(addr);
    const data = { addr, user, uses: 1, pool: this as UpstreamPool } as UpstreamData;
    this.open++;
    this.count(addr, 1);
    let s: UpstreamSocket;
    try {
      s = await Bun.connect<UpstreamData>({ hostname, port, data, socket: handlers });
    } catch (e) {
      this.open--;
      this.count(addr, -1);
      throw e;
    }
    data.out = new Outbox(s as Socket<unknown>, () => {});
    s.setNoDelay(true);
    let set = this.live.get(addr);
    if (set === undefined) this.live.set(addr, (set = new Set()));
    set.add(s);
    return s;
  }

  /** Give a connection whose exchange ended cleanly back for reuse. */
  release(s: UpstreamSocket): void {
    s.data.user = null;
    if (s.readyState !== 1 || s.data.out.blocked) {
      s.terminate();
      return;
    }
    let list = this.idle.get(s.data.addr);
    if (list === undefined) this.idle.set(s.data.addr, (list = []));
    if (list.length >= this.o.maxIdle) {
      s.end();
      return;
    }
    s.timeout(Math.max(1, Math.ceil(this.o.idleMs / 1000)));
    list.push(s);
  }

  /**
   * Connections to these replicas carrying an exchange or a WebSocket tunnel now (open, not idle): what a draining
   * replica still serves.
   */
  busy(addrs: ReadonlySet<string>): number {
    let n = 0;
    for (const a of addrs) n += (this.perAddr.get(a) ?? 0) - (this.idle.get(a)?.length ?? 0);
    return n;
  }

  /** Close the idle connections to these replicas (they take no new exchange: they are being drained). */
  dropIdle(addrs: ReadonlySet<string>): void {
    for (const a of addrs) for (const s of [...(this.idle.get(a) ?? [])]) s.end();
  }

  /**
   * Tell what still uses connections to these replicas that they leave (a tunnel then closes with a Close frame);
   * returns how many tunnels were told.
   */
  goAway(addrs: ReadonlySet<string>): number {
    let n = 0;
    for (const a of addrs) for (const s of [...(this.live.get(a) ?? [])]) if (s.data.user?.goAway?.()) n++;
    return n;
  }

  private count(addr: string, by: number): void {
    const n = (this.perAddr.get(addr) ?? 0) + by;
    if (n > 0) this.perAddr.set(addr, n);
    else this.perAddr.delete(addr);
  }

  /** The socket closed (its close handler). */
  closed(s: UpstreamSocket): void {
    this.open--;
    this.count(s.data.addr, -1);
    const set = this.live.get(s.data.addr);
    if (set?.delete(s) && set.size === 0) this.live.delete(s.data.addr);
    const list = this.idle.get(s.data.addr);
    if (list === undefined) return;
    const i = list.indexOf(s);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.idle.delete(s.data.addr);
  }
}

/** Drop a connection that cannot be reused (its user gets no close callback). */
export function discard(s: UpstreamSocket): void {
  s.data.user = null;
  s.terminate();
}
