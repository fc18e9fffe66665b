/**
 * Writing to a Bun socket with backpressure. `Socket.write` takes what the kernel accepts and returns the count; the
 * rest is kept here by reference (no copy: Bun hands every socket read a buffer of its own, and the engine never
 * reuses one it wrote; test/unit/proxy/h1/runtime.test.ts holds Bun to that) and written on `drain`. While anything
 * waits, `blocked` is true and the caller pauses the side that feeds it; `onFlowing` says when to resume.
 * `stalledSince` is when the peer last took bytes while something waited (a send timeout drops a peer that stopped
 * reading).
 */
import type { Socket } from "bun";

export class Outbox {
  private queue: Buffer[] = [];
  private queued = 0;
  /** After end(): close once the queue is written. */
  private ending = false;
  /** performance.now() of the last progress while something waits; 0 when nothing does. */
  stalledSince = 0;

  constructor(
    private readonly sock: Socket<unknown>,
    private readonly onFlowing: () => void,
  ) {}

  /** Something waits to be written. */
  get blocked(): boolean {
    return this.queued > 0;
  }

  /** Write `data` (or queue it behind what waits). Returns false when the socket is closed. */
  write(data: Buffer | string): boolean {
    if (this.ending) return false;
    const buf = typeof data === "string" ? Buffer.from(data, "latin1") : data;
    if (buf.length === 0) return true;
    if (this.queued > 0) {
      this.queue.push(buf);
      this.queued += buf.length;
      return true;
    }
    const n = this.sock.write(buf);
    if (n < 0) return false;
    if (n < buf.length) {
      this.queue.push(buf.subarray(n));
      this.queued += buf.length - n;
      this.stalledSince = performance.now();
    }
    return true;
  }

  /** Call from the socket's drain handler. */
  drain(): void {
    while (this.queue.length > 0) {
      const head = this.queue[0];
      const n = this.sock.write(head);
      if (n < 0) {
        this.queue = [];
        this.queued = 0;
        return;
      }
      this.queued -= n;
      if (n > 0) this.stalledSince = performance.now();
      if (n < head.length) {
        this.queue[0] = head.subarray(n);
        return;
      }
      this.queue.shift();
    }
    this.stalledSince = 0;
    if (this.ending) {
      this.close();
      return;
    }
    this.onFlowing();
  }

  /** Half-close with shutdown(2): Bun's end() closes both ways within milliseconds, and a close with unread input
   * makes the kernel send a reset that destroys the answer still on its way to the peer. */
  private close(): void {
    this.sock.shutdown();
  }

  /** Half-close (FIN) once everything queued is written; the socket stays readable until the peer closes. */
  end(): void {
    if (this.ending) return;
    this.ending = true;
    if (this.queued === 0) this.close();
  }
}
