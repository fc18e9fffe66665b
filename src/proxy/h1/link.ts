/**
 * A client connection as the raw engine sees it, whichever listener accepted it: a Bun.listen socket (plain HTTP) or
 * a node:tls socket (TLS, see src/proxy/listeners-tls.ts). Both write with backpressure: `blocked` says something
 * waits to be written, and the `flowing` callback given at creation says when it has all gone.
 */

import type { TLSSocket } from "node:tls";
import type { Socket } from "bun";
import { Outbox } from "./outbox";

export interface ClientLink {
  /** The peer's address as the socket reports it (the proxy resolves trusted forwarders itself). */
  readonly remoteAddress: string;
  /** The connection is TLS. */
  readonly secure: boolean;
  /** Something waits to be written. */
  readonly blocked: boolean;
  /** performance.now() of the peer's last read progress while something waits to be written; 0 when nothing does. */
  readonly stalledSince: number;
  /** Write `data` (or queue it behind what waits); false when the connection is closed or ending. */
  write(data: Buffer | string): boolean;
  /** Half-close once everything queued is written (the peer's further bytes can still be read and discarded). */
  end(): void;
  /** Close now. */
  terminate(): void;
  pause(): void;
  resume(): void;
  /** TCP keep-alive probes after `ms` of silence (a tunnel whose peer vanished is found and closed). */
  keepAlive(ms: number): void;
}

/** A Bun.listen socket; the listener's `drain` handler must call `drain()`. */
export class BunLink implements ClientLink {
  readonly secure = false;
  private readonly out: Outbox;

  constructor(
    private readonly sock: Socket<unknown>,
    flowing: () => void,
  ) {
    this.out = new Outbox(sock, flowing);
  }

  get remoteAddress(): string {
    return this.sock.remoteAddress;
  }

  get blocked(): boolean {
    return this.out.blocked;
  }

  get stalledSince(): number {
    return this.out.stalledSince;
  }

  write(data: Buffer | string): boolean {
    return this.out.write(data);
  }

  drain(): void {
    this.out.drain();
  }

  end(): void {
    this.out.end();
  }

  terminate(): void {
    this.sock.terminate();
  }

  pause(): void {
    this.sock.pause();
  }

  resume(): void {
    this.sock.resume();
  }

  keepAlive(ms: number): void {
    this.sock.setKeepAlive(true, ms);
  }
}

/** A node:tls socket after its handshake. Node streams queue what the socket cannot take and say so with 'drain'. */
export class TlsLink implements ClientLink {
  readonly secure = true;
  private waiting = false;
  private ending = false;
  stalledSince = 0;

  constructor(
    private readonly sock: TLSSocket,
    readonly remoteAddress: string,
    flowing: () => void,
  ) {
    sock.on("drain", () => {
      this.waiting = false;
      this.stalledSince = 0;
      if (!this.ending) flowing();
    });
  }

  get blocked(): boolean {
    return this.waiting;
  }

  write(data: Buffer | string): boolean {
    if (this.ending || this.sock.destroyed) return false;
    if (data.length === 0) return true;
    if (!this.sock.write(typeof data === "string" ? Buffer.from(data, "latin1") : data) && !this.waiting) {
      // node:tls says only when everything queued is gone ('drain'), so a stall counts from the first full write
      this.waiting = true;
      this.stalledSince = performance.now();
    }
    return true;
  }

  end(): void {
    if (this.ending) return;
    this.ending = true;
    this.sock.end();
  }

  terminate(): void {
    this.sock.destroy();
  }

  pause(): void {
    this.sock.pause();
  }

  resume(): void {
    this.sock.resume();
  }

  keepAlive(ms: number): void {
    this.sock.setKeepAlive(true, ms);
  }
}
