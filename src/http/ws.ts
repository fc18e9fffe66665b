/**
 * WebSocket plumbing shared by every stream: authentication at upgrade (the auth macro), same-origin check (close
 * 1008), caps on open streams in all and per user (close 1008), 16 KiB read limit, a read deadline reset by any client
 * frame (close 1008), server pings, periodic re-authentication (close 1008 when the credential no longer holds), a
 * bounded send buffer per socket and in all (a slow client is closed with 1011), and 1001 on shutdown. Streams only
 * say what to send.
 */
import type { ServerWebSocket } from "bun";
import type { Clock } from "../lib/time";
import type { Log } from "../log/logger";
import type { Principal } from "../shared/principal";

/** Spec limits; tests shorten them. */
export interface WsTimings {
  /** Close a socket that has sent nothing (not even a pong) for this long. */
  readDeadlineMs: number;
  /** Send a ping this often. */
  pingEveryMs: number;
  /** Re-check the caller's credential this often. */
  authRecheckMs: number;
  /** A socket closed with bytes still unsent gets this long to take them, then is cut (default 10 s). */
  closeGraceMs?: number;
  /** A stream waiting this long for its client to catch up closes it as too slow (default 30 s). */
  stallMs?: number;
}

export const WS_TIMINGS: WsTimings = { readDeadlineMs: 5 * 60_000, pingEveryMs: 30_000, authRecheckMs: 60_000 };
export const WS_READ_LIMIT = 16 * 1024;
/** A client that lets this much pile up unsent is too slow to follow the stream. */
export const WS_MAX_BUFFERED = 1024 * 1024;
/** What all sockets together may hold unsent (default of `streams.max_buffered_mib`); past it the most behind close. */
export const WS_TOTAL_BUFFERED = 64 * 1024 * 1024;

/** Caps on open streams (config `streams.*`). */
export interface WsLimits {
  maxOpen: number;
  maxPerUser: number;
  /** Bytes all sockets together may hold unsent (default WS_TOTAL_BUFFERED). */
  maxBuffered?: number;
}

/** Open streams against their caps, for operators (`GET /api/system/info`). */
export interface WsStats {
  open: number;
  max_open: number;
  max_per_user: number;
  /** Streams refused by a cap since start. */
  refused: number;
  /** Streams closed because their client could not keep up, since start. */
  too_slow: number;
  /** Bytes all sockets together may hold unsent. */
  max_buffered: number;
}

/** Close codes of SPEC.md. */
export const CLOSE = { normal: 1000, goingAway: 1001, policy: 1008, serverError: 1011 } as const;

type Raw = ServerWebSocket<unknown>;

interface Tracked {
  principal: Principal;
  lastRead: number;
  lastPing: number;
  lastAuth: number;
  checking: boolean;
  cleanup: Array<() => void>;
  /** Unsent bytes when last looked at (counted in the hub's total). */
  buffered: number;
  /** Streams waiting for the client to catch up. */
  waiting: Array<{ below: number; wake: () => void; since: number }>;
}

/** A stream's view of its socket. */
export interface StreamSocket {
  readonly principal: Principal;
  /** Send one frame; objects and strings are JSON-encoded. Returns false once the socket is closed. */
  send(frame: unknown): boolean;
  /** Send a frame already encoded as JSON text (one encoding shared by many sockets). */
  sendText(json: string): boolean;
  close(code?: number, reason?: string): void;
  /** Run `fn` when the socket closes for any reason. */
  onClose(fn: () => void): void;
  readonly open: boolean;
  /**
   * Resolves once the client has taken what was sent down to `below` bytes unsent, or the socket closed: a stream
   * sending much at once (a long history) paces itself instead of being closed as too slow.
   */
  drained(below: number): Promise<void>;
}

/** Tracks every open stream socket and enforces the timers with one sweeper. */
export class WsHub {
  private readonly socks = new Map<Raw, Tracked>();
  private readonly perUser = new Map<number, number>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private refused = 0;
  private tooSlow = 0;
  /**
   * Unsent bytes of every socket as last seen: updated on each send, so the total budget holds between two sweeps
   * too (a thousand sockets filling at once would otherwise hold a thousand times the per-socket limit for up to a
   * second). Drained sockets are seen again on their next send or sweep; until then the total errs high, and an
   * over-budget total is counted afresh before anyone is closed.
   */
  private buffered = 0;
  /**
   * Finished streams whose sockets still had bytes unsent. Closed at once, the runtime would keep those bytes out of
   * sight until the client took them, and a client that never reads would keep them for good (a user could open,
   * stall and be closed again and again). So the close waits here until the bytes are gone, counted in the total:
   * cut after the grace, or first when over budget.
   */
  private readonly closing = new Map<Raw, { since: number; buffered: number; code: number; reason?: string }>();

  constructor(
    private readonly deps: { clock: Clock; log: Log; recheck: (p: Principal) => Promise<Principal | null> },
    private readonly timings: WsTimings = WS_TIMINGS,
    private readonly limits: WsLimits = { maxOpen: 1000, maxPerUser: 100 },
  ) {}

  /** Why a new stream of `principal` is refused by a cap (counted), or null when it may open. */
  admit(principal: Principal): string | null {
    const mine = this.perUser.get(principal.user.id) ?? 0;
    const why =
      this.socks.size >= this.limits.maxOpen
        ? `too many open streams (limit ${this.limits.maxOpen})`
        : mine >= this.limits.maxPerUser
          ? `too many open streams for this user (limit ${this.limits.maxPerUser})`
          : null;
    if (why) this.refused++;
    return why;
  }

  /** Open streams against their caps. */
  stats(): WsStats {
    return {
      open: this.socks.size,
      max_open: this.limits.maxOpen,
      max_per_user: this.limits.maxPerUser,
      refused: this.refused,
      too_slow: this.tooSlow,
      max_buffered: this.maxBuffered,
    };
  }

  private get maxBuffered(): number {
    return this.limits.maxBuffered ?? WS_TOTAL_BUFFERED;
  }

  /** Start tracking a socket that passed the upgrade checks; returns its stream handle. */
  add(raw: Raw, principal: Principal): StreamSocket {
    const now = this.deps.clock.now();
    const t: Tracked = {
      principal,
      lastRead: now,
      lastPing: now,
      lastAuth: now,
      checking: false,
      cleanup: [],
      buffered: 0,
      waiting: [],
    };
    this.socks.set(raw, t);
    this.perUser.set(principal.user.id, (this.perUser.get(principal.user.id) ?? 0) + 1);
    this.ensureSweeper();
    const hub = this;
    const sendText = (json: string) => {
      if (!hub.socks.has(raw)) return false;
      if (raw.getBufferedAmount() > WS_MAX_BUFFERED) {
        hub.slow(raw);
        return false;
      }
      raw.sendText(json);
      const after = raw.getBufferedAmount();
      hub.buffered += after - t.buffered;
      t.buffered = after;
      if (hub.buffered > hub.maxBuffered) hub.enforceBudget();
      return hub.socks.has(raw);
    };
    return {
      principal,
      get open() {
        return hub.socks.has(raw);
      },
      send: (frame) => sendText(JSON.stringify(frame)),
      sendText,
      close(code = CLOSE.normal, reason) {
        hub.closeRaw(raw, code, reason);
      },
      onClose(fn) {
        if (hub.socks.has(raw)) t.cleanup.push(fn);
        else fn();
      },
      drained(below) {
        if (!hub.socks.has(raw) || raw.getBufferedAmount() <= below) return Promise.resolve();
        return new Promise((wake) => t.waiting.push({ below, wake, since: hub.deps.clock.now() }));
      },
    };
  }

  /** The runtime sent some of what waited: wake the streams waiting for that. */
  drain(raw: Raw): void {
    const c = this.closing.get(raw);
    if (c && raw.getBufferedAmount() === 0) this.finishClose(raw, c.code, c.reason);
    const t = this.socks.get(raw);
    if (!t?.waiting.length) return;
    const n = raw.getBufferedAmount();
    const still = t.waiting.filter((w) => n > w.below);
    for (const w of t.waiting) if (n <= w.below) w.wake();
    t.waiting = still;
  }

  /**
   * Any client frame (message, ping, pong) resets the read deadline. A client that sends without reading is held to
   * the same bound as a slow reader: the runtime answers each ping with a pong that waits unsent (up to 16 MiB).
   */
  touch(raw: Raw): void {
    const t = this.socks.get(raw);
    if (!t) return;
    t.lastRead = this.deps.clock.now();
    if (raw.getBufferedAmount() > WS_MAX_BUFFERED) this.slow(raw);
  }

  /** The socket closed: forget it and run its cleanups. */
  closed(raw: Raw): void {
    const c = this.closing.get(raw);
    if (c) {
      this.closing.delete(raw);
      this.buffered -= c.buffered;
    }
    const t = this.socks.get(raw);
    if (!t) {
      if (this.socks.size === 0 && this.closing.size === 0) this.stopSweeper();
      return;
    }
    this.socks.delete(raw);
    this.buffered -= t.buffered;
    const id = t.principal.user.id;
    const left = (this.perUser.get(id) ?? 1) - 1;
    if (left > 0) this.perUser.set(id, left);
    else this.perUser.delete(id);
    for (const w of t.waiting) w.wake();
    t.waiting = [];
    for (const fn of t.cleanup) {
      try {
        fn();
      } catch (e) {
        this.deps.log.warn("stream cleanup failed", { error: e as Error });
      }
    }
    if (this.socks.size === 0 && this.closing.size === 0) this.stopSweeper();
  }

  get size(): number {
    return this.socks.size;
  }

  /** Close a socket whose client cannot keep up (1011 once it has taken what it was sent, or cut; see `closing`). */
  private slow(raw: Raw): void {
    this.tooSlow++;
    this.closeRaw(raw, CLOSE.serverError, "client too slow");
  }

  /** Drop the connection at once; the runtime lets go of its unsent bytes. */
  private cut(raw: Raw): void {
    try {
      raw.terminate();
    } catch {
      // already gone
    }
    this.closed(raw);
  }

  /** One pass of the timers: deadlines, pings, re-authentication, and the budget of unsent bytes. */
  sweep(): void {
    const now = this.deps.clock.now();
    for (const [raw, c] of this.closing) {
      const left = raw.getBufferedAmount();
      if (left === 0) this.finishClose(raw, c.code, c.reason);
      else if (now - c.since >= (this.timings.closeGraceMs ?? 10_000)) this.cut(raw);
    }
    this.enforceBudget();
    for (const [raw, t] of this.socks) {
      // a stream holding what it still has to send (a long history) for a client that stopped taking it
      if (t.waiting.length && now - t.waiting[0].since >= (this.timings.stallMs ?? 30_000)) {
        this.slow(raw);
        continue;
      }
      if (now - t.lastRead >= this.timings.readDeadlineMs) {
        // the client broke the stream's keep-alive rule: 1001 would say the server is going away, 1000 that the
        // stream is finished (a client would not reconnect); 1008 with the reason says what happened
        this.closeRaw(raw, CLOSE.policy, "read deadline exceeded");
        continue;
      }
      if (now - t.lastPing >= this.timings.pingEveryMs) {
        t.lastPing = now;
        raw.ping();
      }
      if (!t.checking && now - t.lastAuth >= this.timings.authRecheckMs) {
        t.checking = true;
        this.deps
          .recheck(t.principal)
          .then((p) => {
            t.lastAuth = this.deps.clock.now();
            if (!p) this.closeRaw(raw, CLOSE.policy, "authentication no longer valid");
          })
          .catch(() => this.closeRaw(raw, CLOSE.serverError, "authentication check failed"))
          .finally(() => {
            t.checking = false;
          });
      }
    }
  }

  /**
   * Count the unsent bytes afresh; past the total budget, cut the closed sockets still holding bytes (oldest first),
   * then the open ones furthest behind, until back under it.
   */
  private enforceBudget(): void {
    let total = 0;
    const behind: Array<[Raw, number]> = [];
    for (const [raw, c] of this.closing) {
      c.buffered = raw.getBufferedAmount();
      total += c.buffered;
      // sockets already closed go first: nobody is reading them
      behind.push([raw, Number.MAX_SAFE_INTEGER - behind.length]);
    }
    for (const [raw, t] of this.socks) {
      const n = raw.getBufferedAmount();
      t.buffered = n;
      if (n === 0) continue;
      total += n;
      behind.push([raw, n]);
    }
    this.buffered = total;
    if (total <= this.maxBuffered) return;
    behind.sort((a, b) => b[1] - a[1]);
    for (const [raw] of behind) {
      if (this.buffered <= this.maxBuffered) break;
      // only a cut takes the bytes off the total (a close would wait for them): the furthest behind go without one
      if (!this.closing.has(raw)) this.tooSlow++;
      this.cut(raw);
    }
  }

  /** Close every socket with 1001 (server going away). */
  shutdown(): void {
    for (const raw of [...this.closing.keys()]) this.cut(raw);
    for (const raw of [...this.socks.keys()]) this.closeRaw(raw, CLOSE.goingAway, "server shutting down");
    this.stopSweeper();
  }

  /** Close and forget one socket. */
  closeRaw(raw: Raw, code: number, reason?: string): void {
    const left = this.socks.has(raw) ? raw.getBufferedAmount() : 0;
    this.closed(raw);
    if (left === 0 || code === CLOSE.goingAway) {
      this.finishClose(raw, code, reason);
      return;
    }
    this.closing.set(raw, { since: this.deps.clock.now(), buffered: left, code, reason });
    this.buffered += left;
    this.ensureSweeper();
  }

  private finishClose(raw: Raw, code: number, reason?: string): void {
    this.closed(raw);
    try {
      raw.close(code, reason);
    } catch {
      // already closed
    }
  }

  private ensureSweeper(): void {
    if (this.timer) return;
    const every = Math.max(
      10,
      Math.min(1000, this.timings.pingEveryMs / 4, this.timings.authRecheckMs / 4, this.timings.readDeadlineMs / 4),
    );
    this.timer = setInterval(() => this.sweep(), every);
    this.timer.unref?.();
  }

  private stopSweeper(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
