/**
 * Scripted metrics for tests of what is around the collector (storage, rollups, queries, routes, alerts): ticks built
 * from plain numbers at the clock's time, and a collector that hands them out.
 */
import type { Clock } from "../../src/lib/time";
import type { ContainerSample, HostSample, Tick } from "../../src/modules/metrics/samples";

/** A running container sample; every value null unless given. */
export function containerSample(
  t: number,
  over: Partial<ContainerSample> & { containerId: string; app: string },
): ContainerSample {
  return {
    t,
    name: `${over.app}-${over.service ?? "web"}-1`,
    service: "web",
    running: true,
    cpuPct: null,
    cpuLimitPct: null,
    memBytes: null,
    memLimitBytes: null,
    netRxBps: null,
    netTxBps: null,
    blkReadBps: null,
    blkWriteBps: null,
    restarts: null,
    ...over,
  };
}

/** A host sample; every value null unless given. */
export function hostSample(t: number, over: Partial<HostSample> = {}): HostSample {
  return {
    t,
    cpuPct: null,
    load1: null,
    load5: null,
    load15: null,
    memUsedBytes: null,
    memTotalBytes: null,
    swapUsedBytes: null,
    swapTotalBytes: null,
    diskFreeBytes: null,
    diskTotalBytes: null,
    dockerDiskFreeBytes: null,
    dockerDiskTotalBytes: null,
    netRxBps: null,
    netTxBps: null,
    ...over,
  };
}

/** What one scripted tick holds: containers and host values (the tick time is the clock's). */
export type TickScript = (
  t: number,
  n: number,
) => { containers?: Array<Partial<ContainerSample> & { containerId: string; app: string }>; host?: Partial<HostSample> };

/** A tick at `t` from a script's output. */
export function tickAt(t: number, s: ReturnType<TickScript>): Tick {
  return { t, containers: (s.containers ?? []).map((c) => containerSample(t, c)), host: hostSample(t, s.host) };
}

/** A collector answering `script(now, n)` for its n-th call (from 0); `fail` makes the next call throw. */
export class ScriptedCollector {
  calls = 0;
  fail: Error | null = null;
  constructor(
    private readonly clock: Clock,
    private readonly script: TickScript,
  ) {}
  async collect(): Promise<Tick> {
    const n = this.calls++;
    if (this.fail) {
      const e = this.fail;
      this.fail = null;
      throw e;
    }
    const t = this.clock.now();
    return tickAt(t, this.script(t, n));
  }
}
