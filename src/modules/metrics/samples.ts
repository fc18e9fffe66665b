/**
 * What one collection tick produces (container samples by compose label, one host sample) and the read side the
 * alert evaluator and the Prometheus exposition use. Rates are per second since the previous tick.
 */

/** One container at one tick; values null when the source could not give them (the first tick has no rates). */
export interface ContainerSample {
  /** Tick time, ms since the epoch. */
  t: number;
  containerId: string;
  /** Container name without the leading slash. */
  name: string;
  /** From the compose labels: `com.docker.compose.project` mapped back to the app slug, and the service. */
  app: string;
  service: string;
  running: boolean;
  /** Percent of one core (200 = two cores busy). */
  cpuPct: number | null;
  /** Percent of the CPU limit; null without a limit. */
  cpuLimitPct: number | null;
  memBytes: number | null;
  /** Null without a memory limit. */
  memLimitBytes: number | null;
  netRxBps: number | null;
  netTxBps: number | null;
  blkReadBps: number | null;
  blkWriteBps: number | null;
  restarts: number | null;
}

/** The host at one tick. */
export interface HostSample {
  t: number;
  /** Percent of the whole machine (100 = every core busy), unlike a container's percent of one core. */
  cpuPct: number | null;
  load1: number | null;
  load5: number | null;
  load15: number | null;
  memUsedBytes: number | null;
  memTotalBytes: number | null;
  swapUsedBytes: number | null;
  swapTotalBytes: number | null;
  diskFreeBytes: number | null;
  diskTotalBytes: number | null;
  dockerDiskFreeBytes: number | null;
  dockerDiskTotalBytes: number | null;
  netRxBps: number | null;
  netTxBps: number | null;
}

/** One tick's result. */
export interface Tick {
  t: number;
  containers: ContainerSample[];
  host: HostSample;
}

/** Reads metrics for the evaluator and the exposition. */
export interface MetricsReader {
  /** The last tick, or null before the first. */
  latest(): Tick | null;
  /** Raw container samples since `sinceMs` (epoch ms), oldest first; `app` narrows to one app. */
  containerSamples(sinceMs: number, app?: string): ContainerSample[];
  /** Raw host samples since `sinceMs`, oldest first. */
  hostSamples(sinceMs: number): HostSample[];
  /** Called after each tick is stored; returns an unsubscribe function. */
  onTick(listener: (tick: Tick) => void): () => void;
}
