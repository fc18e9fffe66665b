/**
 * Deploy output of in-flight deploys, per app: the lines so far (replayed to late subscribers), live lines, and the
 * single final frame. A deploy-logs stream that connects while nothing runs waits here for up to 3 seconds.
 */

import type { DeployFrame } from "../../shared/deploys";

export type { DeployFrame };

type Listener = (f: DeployFrame) => void;

/** Lines kept per deploy for late subscribers; older ones are dropped (the deploy log is not an archive). */
const MAX_LINES = 5000;

class Run {
  frames: DeployFrame[] = [];
  listeners = new Set<Listener>();
  finished = false;
}

/** The output hub of every app's current deploy. */
export class DeployOutput {
  private readonly runs = new Map<string, Run>();
  private readonly waiting = new Map<string, Set<() => void>>();

  /** `onIdle` runs each time the last in-flight deploy ends (the server collects garbage after a burst then). */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly onIdle?: () => void,
  ) {}

  /** A deploy of `slug` starts: later frames go to its subscribers. */
  begin(slug: string): void {
    this.runs.set(slug, new Run());
    for (const wake of this.waiting.get(slug) ?? []) wake();
    this.waiting.delete(slug);
  }

  /** One line of output. */
  line(slug: string, action: DeployFrame["action"], output: string): void {
    this.emit(slug, { timestamp: new Date(this.now()).toISOString(), action, output, done: false });
  }

  /** The deploy ended: send the one final frame and forget the run. */
  end(slug: string, action: DeployFrame["action"], summary: string): void {
    const run = this.runs.get(slug);
    if (!run) return;
    this.emit(slug, { timestamp: new Date(this.now()).toISOString(), action, output: summary, done: true });
    run.finished = true;
    run.listeners.clear();
    this.runs.delete(slug);
    if (this.runs.size === 0) this.onIdle?.();
  }

  /** How many deploys are in flight, over every app. */
  inFlight(): number {
    return this.runs.size;
  }

  /** Whether a deploy of `slug` is in flight. */
  active(slug: string): boolean {
    return this.runs.has(slug);
  }

  /**
   * Follow `slug`'s deploy: frames so far, then live ones, ending with the done frame. If none is in flight, wait up
   * to `waitMs` for one to start; if none does, `listener` gets the single `{done: true, action: "none"}` frame.
   * Returns the unsubscribe function.
   */
  follow(slug: string, listener: Listener, waitMs = 3000): () => void {
    let cancelled = false;
    let detach = () => {};
    const attach = (run: Run) => {
      for (const f of run.frames) listener(f);
      run.listeners.add(listener);
      detach = () => run.listeners.delete(listener);
    };
    const run = this.runs.get(slug);
    if (run) attach(run);
    else {
      const wake = () => {
        clearTimeout(timer);
        const r = this.runs.get(slug);
        if (!cancelled && r) attach(r);
      };
      const timer = setTimeout(() => {
        this.waiting.get(slug)?.delete(wake);
        if (!cancelled) listener({ timestamp: new Date(this.now()).toISOString(), action: "none", output: "", done: true });
      }, waitMs);
      const set = this.waiting.get(slug) ?? new Set();
      set.add(wake);
      this.waiting.set(slug, set);
      detach = () => {
        clearTimeout(timer);
        set.delete(wake);
      };
    }
    return () => {
      cancelled = true;
      detach();
    };
  }

  private emit(slug: string, f: DeployFrame): void {
    const run = this.runs.get(slug);
    if (!run) return;
    run.frames.push(f);
    if (run.frames.length > MAX_LINES) run.frames.splice(0, run.frames.length - MAX_LINES);
    for (const l of [...run.listeners]) l(f);
  }
}
