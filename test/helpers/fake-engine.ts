/**
 * A scripted Docker engine for the log hub's unit tests: history per container, live lines pushed by the test, a
 * follow that can be broken or failed on demand, and the container's running state. It counts every follow opened.
 */
import type { Engine, LogLine } from "../../src/docker/types";
import { EngineError } from "../../src/docker/types";

interface Follow {
  queue: LogLine[];
  wake: (() => void) | null;
  ending: "end" | Error | null;
}

/** The part of the engine the hub uses, scripted. */
export class ScriptedEngine {
  history = new Map<string, LogLine[]>();
  running = new Map<string, boolean>();
  /** When set, opening a follow throws this (an engine that does not answer). */
  failFollows: Error | null = null;
  follows: Array<{ id: string; since?: number }> = [];
  private open = new Map<string, Set<Follow>>();

  /** Lines the container writes now: history for later readers, and every open follow. */
  write(id: string, ...lines: LogLine[]): void {
    this.history.set(id, [...(this.history.get(id) ?? []), ...lines]);
    for (const f of this.open.get(id) ?? []) {
      f.queue.push(...lines);
      f.wake?.();
    }
  }

  /** End (or fail) every open follow of the container. */
  breakFollows(id: string, how: "end" | Error = "end"): void {
    for (const f of this.open.get(id) ?? []) {
      f.ending = how;
      f.wake?.();
    }
  }

  openFollows(id: string): number {
    return this.open.get(id)?.size ?? 0;
  }

  asEngine(): Engine {
    const self = this;
    return {
      async inspect(id: string) {
        if (!self.running.has(id)) throw new EngineError(404, `no such container: ${id}`);
        return { State: { Running: self.running.get(id) }, Config: { Tty: false } };
      },
      logs(id: string, o: { tail?: number; since?: number; follow?: boolean; signal?: AbortSignal }) {
        return (async function* () {
          const all = self.history.get(id) ?? [];
          if (!o.follow) {
            yield* o.tail === undefined ? all : all.slice(Math.max(0, all.length - o.tail));
            return;
          }
          self.follows.push({ id, since: o.since });
          if (self.failFollows) throw self.failFollows;
          const f: Follow = { queue: [], wake: null, ending: null };
          const set = self.open.get(id) ?? new Set();
          set.add(f);
          self.open.set(id, set);
          try {
            // what a real follow sends first: the lines at or after `since`
            if (o.since !== undefined) yield* all.filter((l) => l.ts !== null && Date.parse(l.ts) / 1000 >= o.since!);
            if (!self.running.get(id)) return;
            while (!o.signal?.aborted) {
              while (f.queue.length) yield f.queue.shift()!;
              if (f.ending === "end") return;
              if (f.ending) throw f.ending;
              await new Promise<void>((r) => {
                f.wake = r;
                o.signal?.addEventListener("abort", () => r(), { once: true });
              });
              f.wake = null;
            }
          } finally {
            set.delete(f);
          }
        })();
      },
    } as unknown as Engine;
  }
}

/** A log line at `seconds` past a fixed minute. */
export const at = (seconds: number, line: string): LogLine => ({
  ts: new Date(Date.parse("2026-11-27T10:00:00Z") + seconds * 1000).toISOString(),
  stream: "stdout",
  line,
});
