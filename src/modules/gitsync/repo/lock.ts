/** One operation at a time on a repository: callers queue in arrival order; a failure does not stall the queue. */

/** A FIFO of async operations. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  /** Operations queued or running. */
  get size(): number {
    return this.pending;
  }

  /** Run `fn` after every operation queued before it has settled. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    this.pending++;
    const next = this.tail
      .then(() => fn())
      .finally(() => {
        this.pending--;
      });
    this.tail = next.catch(() => {});
    return next;
  }
}
