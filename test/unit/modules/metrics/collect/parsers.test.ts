/**
 * The collector's pure parts: /proc and cgroup file parsers, the engine stats mapping, CPU limits from inspect, the
 * app of a compose project, and rates from counters (first reading, counters going backwards).
 */
import { describe, expect, it } from "bun:test";
import { keyed, memoryInUse, parseBlkio, parseIoStat, parseProcCgroup } from "../../../../../src/modules/metrics/collect/cgroup";
import { countersFromStats, readTime } from "../../../../../src/modules/metrics/collect/engine-stats";
import { appOfProject, cpuLimitCores, cpusetSize } from "../../../../../src/modules/metrics/collect/inventory";
import {
  isHostInterface,
  parseLoadavg,
  parseMeminfo,
  parseNetDev,
  parseProcStat,
} from "../../../../../src/modules/metrics/collect/procfs";
import { RateTracker } from "../../../../../src/modules/metrics/collect/rates";

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 5000      10    0    0    0     0          0         0     5000      10    0    0    0     0       0          0
  eth0:  1000       9    0    0    0     0          0         0      300       3    0    0    0     0       0          0
  eth1:   200       2    0    0    0     0          0         0       50       1    0    0    0     0       0          0
docker0:  7000     12    0    0    0     0          0         0     7000       3    0    0    0     0       0          0
br-1808e4033ce5: 7000 1 0 0 0 0 0 0 7000 1 0 0 0 0 0 0
veth199ecf6:  7000   0    0    0    0     0          0         0      806       9    0    0    0     0       0          0
`;

describe("/proc parsers", () => {
  it("sums network bytes over every interface but loopback", () => {
    expect(parseNetDev(NET_DEV)).toEqual({ rx: 1200 + 21000, tx: 350 + 14806 });
  });

  it("leaves the Docker bridges and veth pairs out of the host's traffic", () => {
    expect(parseNetDev(NET_DEV, isHostInterface)).toEqual({ rx: 1200, tx: 350 });
  });

  it("reads a namespace with only loopback as zero traffic, and garbage as nothing", () => {
    const onlyLo = NET_DEV.split("\n").slice(0, 3).join("\n");
    expect(parseNetDev(onlyLo)).toEqual({ rx: 0, tx: 0 });
    expect(parseNetDev("nonsense")).toBeNull();
  });

  it("counts idle and iowait as not busy and guest time once", () => {
    const t = parseProcStat("cpu  100 10 50 800 40 5 5 0 30 0\ncpu0 1 2 3 4\n");
    expect(t).toEqual({ total: 1010, busy: 170 });
    expect(parseProcStat("intr 1 2 3")).toBeNull();
  });

  it("reads the load averages", () => {
    expect(parseLoadavg("0.28 0.26 0.62 6/224 32300\n")).toEqual({ load1: 0.28, load5: 0.26, load15: 0.62 });
    expect(parseLoadavg("")).toBeNull();
  });

  it("counts used memory as total less available, and swap in bytes", () => {
    const m = parseMeminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 600 kB\nSwapTotal: 200 kB\nSwapFree: 50 kB\n");
    expect(m).toEqual({ memTotal: 1024000, memUsed: 409600, swapTotal: 204800, swapUsed: 153600 });
    expect(parseMeminfo("MemTotal: 1000 kB\n").memUsed).toBeNull();
  });
});

describe("cgroup parsers", () => {
  it("reads the controllers and paths of /proc/<pid>/cgroup", () => {
    expect(parseProcCgroup("4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/system.slice/docker-abc.scope\n")).toEqual([
      { controllers: ["memory"], path: "/docker/abc" },
      { controllers: ["cpu", "cpuacct"], path: "/docker/abc" },
      { controllers: [], path: "/system.slice/docker-abc.scope" },
    ]);
  });

  it("sums v1 blkio read and write bytes over devices, leaving out the totals", () => {
    const text = "8:0 Read 4096\n8:0 Write 8192\n8:0 Sync 1\n8:0 Total 12288\n8:16 Read 100\n8:16 Write 0\nTotal 12388\n";
    expect(parseBlkio(text)).toEqual({ read: 4196, write: 8192 });
    expect(parseBlkio("Total 0\n")).toEqual({ read: 0, write: 0 });
  });

  it("sums v2 io.stat bytes over devices", () => {
    const text = "8:0 rbytes=1000 wbytes=2000 rios=1 wios=2 dbytes=0 dios=0\n253:0 rbytes=10 wbytes=20 rios=1 wios=1\n";
    expect(parseIoStat(text)).toEqual({ read: 1010, write: 2020 });
  });

  it("counts memory as docker stats does: usage less the inactive file cache", () => {
    expect(memoryInUse(1000, keyed("total_inactive_file 300\ninactive_file 5\n"), 1)).toBe(700);
    expect(memoryInUse(1000, keyed("inactive_file 400\n"), 2)).toBe(600);
    // a cache larger than the usage (stale stat) is not subtracted
    expect(memoryInUse(1000, keyed("inactive_file 4000\n"), 2)).toBe(1000);
    expect(memoryInUse(1000, new Map(), 1)).toBe(1000);
  });
});

describe("engine stats", () => {
  const stats = (memStats: Record<string, number>, ops: Array<[string, number]>) => ({
    read: "2026-11-27T03:00:06.034481535Z",
    cpu_stats: { cpu_usage: { total_usage: 5_000_000_000 } },
    memory_stats: { usage: 10_000, limit: 1e12, stats: memStats },
    networks: { eth0: { rx_bytes: 100, tx_bytes: 10 }, eth1: { rx_bytes: 1, tx_bytes: 2 } },
    blkio_stats: { io_service_bytes_recursive: ops.map(([op, value]) => ({ major: 8, minor: 0, op, value })) },
  });

  it("maps a cgroup v1 reading to the same counters as the cgroup files", () => {
    const r = countersFromStats(
      stats({ total_inactive_file: 4000, cache: 5000 }, [
        ["Read", 7],
        ["Write", 9],
        ["Total", 16],
      ]),
    );
    expect(r.counters).toEqual({ cpuNs: 5e9, memBytes: 6000, netRx: 101, netTx: 12, blkRead: 7, blkWrite: 9 });
    expect(r.at).toBeCloseTo(Date.parse("2026-11-27T03:00:06.034Z") + 0.481535, 3);
  });

  it("maps a cgroup v2 reading (lower-case ops, inactive_file)", () => {
    const r = countersFromStats(
      stats({ inactive_file: 1000 }, [
        ["read", 3],
        ["write", 4],
      ]),
    );
    expect(r.counters).toMatchObject({ memBytes: 9000, blkRead: 3, blkWrite: 4 });
  });

  it("gives nulls for what a stopped or odd reading leaves out", () => {
    const r = countersFromStats({ read: "0001-01-01T00:00:00Z", memory_stats: {}, cpu_stats: {} });
    expect(r).toEqual({
      at: null,
      counters: { cpuNs: null, memBytes: null, netRx: null, netTx: null, blkRead: null, blkWrite: null },
    });
    expect(readTime("yesterday")).toBeNull();
  });
});

describe("inspect and labels", () => {
  it("takes the smallest CPU limit of NanoCpus, the CFS quota and the cpuset", () => {
    expect(cpuLimitCores({ NanoCpus: 500_000_000 })).toBe(0.5);
    expect(cpuLimitCores({ CpuQuota: 150_000, CpuPeriod: 100_000 })).toBe(1.5);
    expect(cpuLimitCores({ CpuQuota: 50_000, CpuPeriod: 0 })).toBe(0.5);
    expect(cpuLimitCores({ CpusetCpus: "0-3", NanoCpus: 2e9 })).toBe(2);
    expect(cpuLimitCores({ NanoCpus: 0, CpuQuota: -1, CpusetCpus: "" })).toBeNull();
    expect(cpusetSize("0-3,6,8-9")).toBe(7);
    expect(cpusetSize("x")).toBe(0);
  });

  it("maps compose projects of Sundeck apps back to the slug and nothing else", () => {
    expect(appOfProject("sundeck-shop")).toBe("shop");
    expect(appOfProject("sundeck-my-app-2")).toBe("my-app-2");
    expect(appOfProject("sundeck-")).toBeNull();
    expect(appOfProject("sundeck-Bad_Name")).toBeNull();
    expect(appOfProject("other")).toBeNull();
    expect(appOfProject(null)).toBeNull();
  });
});

describe("rates", () => {
  const c = (cpuNs: number, net: number) => ({ cpuNs, memBytes: 1, netRx: net, netTx: net, blkRead: 0, blkWrite: 0 });

  it("has no rate at first sight, then deltas over the wall time", () => {
    const r = new RateTracker();
    expect(r.update("a", 0, c(0, 0)).cpuPct).toBeNull();
    const second = r.update("a", 10_000, c(15e9, 5000));
    expect(second.cpuPct).toBeCloseTo(150);
    expect(second.netRxBps).toBeCloseTo(500);
    expect(second.reset).toBe(false);
  });

  it("restarts the delta when a counter goes backwards (the container restarted)", () => {
    const r = new RateTracker();
    r.update("a", 0, c(50e9, 9000));
    const back = r.update("a", 10_000, c(1e9, 100));
    expect(back).toMatchObject({ cpuPct: null, netRxBps: null, reset: true });
    expect(r.update("a", 20_000, c(6e9, 1100)).cpuPct).toBeCloseTo(50);
  });

  it("keeps a null counter from making up a rate, and forgets keys not retained", () => {
    const r = new RateTracker();
    r.update("a", 0, { ...c(0, 0), netRx: null });
    expect(r.update("a", 1000, c(1e9, 10)).netRxBps).toBeNull();
    r.retain(new Set());
    expect(r.update("a", 2000, c(2e9, 20)).cpuPct).toBeNull();
  });
});
