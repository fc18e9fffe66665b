/**
 * Which containers of a service take traffic while a rolling deploy replaces them: without a pin, every servable
 * replica does; with one, only the pinned ids (the old set while the new one starts and is probed, then the new set
 * in one swap while the old one drains). In memory: after a restart the deploy that set them is gone too, and the
 * containers left are converged from the rollout journal (modules/deploys/rollout).
 */
export class TrafficPins {
  private readonly pins = new Map<string, Map<string, ReadonlySet<string>>>();
  private readonly listeners = new Set<() => void>();
  private readonly drainingCount = new Map<string, number>();

  /** Replicas (`ip:port`) out of the table that still finish what they were given: the proxy does not retry it. */
  draining(): ReadonlySet<string> {
    return new Set(this.drainingCount.keys());
  }

  /** Mark replicas as draining (before they leave the table) or, with `on` false, no longer. */
  drain(addrs: Iterable<string>, on = true): void {
    for (const a of addrs) {
      const n = (this.drainingCount.get(a) ?? 0) + (on ? 1 : -1);
      if (n > 0) this.drainingCount.set(a, n);
      else this.drainingCount.delete(a);
    }
  }

  /** The ids of `service` of app `slug` that take traffic, or undefined when it is not pinned. */
  get(slug: string, service: string): ReadonlySet<string> | undefined {
    return this.pins.get(slug)?.get(service);
  }

  /** Route `service` to exactly these containers (and call the listeners: the route table is rebuilt). */
  set(slug: string, service: string, ids: Iterable<string>): void {
    let app = this.pins.get(slug);
    if (!app) this.pins.set(slug, (app = new Map()));
    app.set(service, new Set(ids));
    this.changed();
  }

  /** Back to every servable replica. */
  clear(slug: string, service: string): void {
    const app = this.pins.get(slug);
    if (!app?.delete(service)) return;
    if (app.size === 0) this.pins.delete(slug);
    this.changed();
  }

  /** Call `fn` after every change; returns the unsubscribe. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }
}
