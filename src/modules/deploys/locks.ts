/** One operation per app at a time: a deploy, a lifecycle action, a removal. */

export type Release = () => void;

/** Per-app mutual exclusion with both refuse-if-busy and wait-your-turn entry. */
export class AppLocks {
  private readonly held = new Map<string, Promise<void>>();

  busy(slug: string): boolean {
    return this.held.has(slug);
  }

  /** Take the lock now, or null when it is held. */
  tryAcquire(slug: string): Release | null {
    if (this.held.has(slug)) return null;
    let release!: () => void;
    this.held.set(
      slug,
      new Promise<void>((r) => {
        release = r;
      }),
    );
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.held.delete(slug);
      release();
    };
  }

  /** Wait for the lock. */
  async acquire(slug: string): Promise<Release> {
    for (;;) {
      const r = this.tryAcquire(slug);
      if (r) return r;
      await this.held.get(slug);
    }
  }
}
