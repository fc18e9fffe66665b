/** One operation at a time on a repository: callers queue in arrival order; a failure does not stall the queue. */

/** A FIFO of async operations. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Resolves once everything queued so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => {});
  }

  /** Run `fn` after every operation queued before it has settled. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(() => fn());
    this.tail = next.catch(() => {});
    return next;
  }
}
