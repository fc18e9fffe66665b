/**
 * The host sample: CPU from /proc/stat (percent of the whole machine, 100 = every core busy), load, memory and swap
 * from /proc/meminfo, network from /proc/net/dev (physical side only, see isHostInterface), and the free and total
 * space of the disks holding data_dir and the Docker root, from statfs.
 */
import { statfsSync } from "node:fs";
import { join } from "node:path";
import type { HostSample } from "../samples";
import {
  type CpuTimes,
  isHostInterface,
  type NetBytes,
  parseLoadavg,
  parseMeminfo,
  parseNetDev,
  parseProcStat,
  readText,
} from "./procfs";

/** Free (available to unprivileged users) and total bytes of the filesystem holding `path`, or nulls. */
export function diskOf(path: string | null): { free: number | null; total: number | null } {
  if (!path) return { free: null, total: null };
  try {
    const s = statfsSync(path);
    // block counts are in fragment-size units (f_frsize), which Node's typings leave out
    const unit = (s as { frsize?: number }).frsize || s.bsize;
    return { free: s.bavail * unit, total: s.blocks * unit };
  } catch {
    return { free: null, total: null };
  }
}

/** Reads host samples; CPU and network rates are against the previous read. */
export class HostReader {
  private prevCpu: CpuTimes | null = null;
  private prevNet: { at: number; n: NetBytes } | null = null;

  constructor(
    private readonly o: {
      procRoot: string;
      dataDir: string;
    },
  ) {}

  /** The sample at tick `t`; `elapsedMs` is a monotonic time for the network rate; `dockerRoot` may be null. */
  read(t: number, elapsedMs: number, dockerRoot: string | null): HostSample {
    const proc = (f: string) => readText(join(this.o.procRoot, f));

    const statText = proc("stat");
    const cpu = statText === null ? null : parseProcStat(statText);
    let cpuPct: number | null = null;
    if (cpu && this.prevCpu && cpu.total > this.prevCpu.total && cpu.busy >= this.prevCpu.busy) {
      cpuPct = ((cpu.busy - this.prevCpu.busy) / (cpu.total - this.prevCpu.total)) * 100;
    }
    this.prevCpu = cpu;

    const loadText = proc("loadavg");
    const load = loadText === null ? null : parseLoadavg(loadText);
    const memText = proc("meminfo");
    const mem = memText === null ? null : parseMeminfo(memText);

    const netText = proc("net/dev");
    const net = netText === null ? null : parseNetDev(netText, isHostInterface);
    let netRxBps: number | null = null;
    let netTxBps: number | null = null;
    const prev = this.prevNet;
    if (net && prev && elapsedMs > prev.at && net.rx >= prev.n.rx && net.tx >= prev.n.tx) {
      const secs = (elapsedMs - prev.at) / 1000;
      netRxBps = (net.rx - prev.n.rx) / secs;
      netTxBps = (net.tx - prev.n.tx) / secs;
    }
    this.prevNet = net ? { at: elapsedMs, n: net } : null;

    const disk = diskOf(this.o.dataDir);
    const docker = diskOf(dockerRoot);
    return {
      t,
      cpuPct,
      load1: load?.load1 ?? null,
      load5: load?.load5 ?? null,
      load15: load?.load15 ?? null,
      memUsedBytes: mem?.memUsed ?? null,
      memTotalBytes: mem?.memTotal ?? null,
      swapUsedBytes: mem?.swapUsed ?? null,
      swapTotalBytes: mem?.swapTotal ?? null,
      diskFreeBytes: disk.free,
      diskTotalBytes: disk.total,
      dockerDiskFreeBytes: docker.free,
      dockerDiskTotalBytes: docker.total,
      netRxBps,
      netTxBps,
    };
  }
}
