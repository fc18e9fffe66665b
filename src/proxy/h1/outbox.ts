/**
 * Writing to a Bun socket with backpressure. `Socket.write` takes what the kernel accepts and returns the count; the
 * rest is kept here (copied, since the caller's buffer may be reused) and written on `drain`. While anything waits,
 * `blocked` is true and the caller pauses the side that feeds it; `onFlowing` says when to resume.
 */
import type { Socket } from "bun";

export class Outbox {
  private queue: Buffer[] = [];
  private queued = 0;
  /** After end(): close once the queue is written. */
  private ending = false;

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
      this.queue.push(Buffer.from(buf));
      this.queued += buf.length;
      return true;
    }
    const n = this.sock.write(buf);
    if (n < 0) return false;
    if (n < buf.length) {
      this.queue.push(Buffer.from(buf.subarray(n)));
      this.queued += buf.length - n;
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
      if (n < head.length) {
        this.queue[0] = head.subarray(n);
        return;
      }
      this.queue.shift();
    }
    if (this.ending) {
      this.sock.end();
      return;
    }
    this.onFlowing();
  }

  /** Close the socket once everything queued is written. */
  end(): void {
    if (this.ending) return;
    this.ending = true;
    if (this.queued === 0) this.sock.end();
  }
}
