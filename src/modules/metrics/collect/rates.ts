/**
 * Rates from cumulative counters: the delta since the previous reading of the same key over the wall time between
 * them. The first reading has no rate; a counter that went backwards (the container restarted, its cgroup was
 * recreated) gives no rate for that tick and becomes the new baseline.
 */
import type { Counters } from "./cgroup";

/** Per-second rates of one reading; null where no delta was possible. */
export interface Rates {
  /** Percent of one core. */
  cpuPct: number | null;
  netRxBps: number | null;
  netTxBps: number | null;
  blkReadBps: number | null;
  blkWriteBps: number | null;
}

/** Whether the reading looked like a restart (a counter went backwards). */
export interface RateResult extends Rates {
  reset: boolean;
}

const NO_RATES: Rates = { cpuPct: null, netRxBps: null, netTxBps: null, blkReadBps: null, blkWriteBps: null };

/** Keeps the previous reading per key (container id and source). */
export class RateTracker {
  private prev = new Map<string, { at: number; c: Counters }>();

  /** Rates of `c` read at `at` (ms) against the previous reading of `key`, which `c` then replaces. */
  update(key: string, at: number, c: Counters): RateResult {
    const p = this.prev.get(key);
    this.prev.set(key, { at, c });
    if (!p) return { ...NO_RATES, reset: false };
    const secs = (at - p.at) / 1000;
    if (!(secs > 0)) return { ...NO_RATES, reset: false };
    let reset = false;
    const rate = (now: number | null, before: number | null): number | null => {
      if (now === null || before === null) return null;
      if (now < before) {
        reset = true;
        return null;
      }
      return (now - before) / secs;
    };
    const cpuNsPerSec = rate(c.cpuNs, p.c.cpuNs);
    const out: RateResult = {
      cpuPct: cpuNsPerSec === null ? null : cpuNsPerSec / 1e7,
      netRxBps: rate(c.netRx, p.c.netRx),
      netTxBps: rate(c.netTx, p.c.netTx),
      blkReadBps: rate(c.blkRead, p.c.blkRead),
      blkWriteBps: rate(c.blkWrite, p.c.blkWrite),
      reset: false,
    };
    out.reset = reset;
    return out;
  }

  /** Drop the reading of `key` (its source changed: the next reading starts afresh). */
  forget(key: string): void {
    this.prev.delete(key);
  }

  /** Drop every key not in `keep` (containers gone). */
  retain(keep: Set<string>): void {
    for (const k of this.prev.keys()) if (!keep.has(k)) this.prev.delete(k);
  }
}
