/**
 * The collector on fixture trees of /proc and /sys/fs/cgroup (cgroup v1 with the cgroupfs and systemd drivers,
 * cgroup v2, a custom parent named by /proc/<pid>/cgroup), with a scripted engine around it: attribution by compose
 * labels, rates over a fake clock, counters going backwards, missing files falling back to the engine's stats.
 */
import { describe, expect, it } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Engine } from "../../../../../src/docker/types";
import { createCollector } from "../../../../../src/modules/metrics/collect";
import { FakeClock } from "../../../../helpers/clock";
import { tempDir } from "../../../../helpers/tmp";

const log: any = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };

/** Write `files` (path relative to `root` → content) into `root`. */
function write(root: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
}

const netDev = (rx: number, tx: number) =>
  `Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes packets\n` +
  `    lo: 999 1 0 0 0 0 0 0 999 1 0 0 0 0 0 0\n  eth0: ${rx} 1 0 0 0 0 0 0 ${tx} 1 0 0 0 0 0 0\n`;

/** A container's cgroup v1 files under `group` (cgroupfs: docker/<id>; systemd: system.slice/docker-<id>.scope). */
function v1(
  cg: string,
  group: string,
  v: { cpuNs: number; usage: number; inactive: number; read: number; write: number },
  cpuMount = "cpuacct",
) {
  write(cg, {
    [`${cpuMount}/${group}/cpuacct.usage`]: `${v.cpuNs}\n`,
    [`memory/${group}/memory.usage_in_bytes`]: `${v.usage}\n`,
    [`memory/${group}/memory.stat`]: `cache 5\ninactive_file 1\ntotal_inactive_file ${v.inactive}\n`,
    [`blkio/${group}/blkio.throttle.io_service_bytes`]: `8:0 Read ${v.read}\n8:0 Write ${v.write}\n8:0 Total ${v.read + v.write}\nTotal ${v.read + v.write}\n`,
  });
}

/** A container's cgroup v2 files in `group`. */
function v2(cg: string, group: string, v: { usec: number; current: number; inactive: number; rbytes: number; wbytes: number }) {
  write(cg, {
    [`${group}/cpu.stat`]: `usage_usec ${v.usec}\nuser_usec 1\nsystem_usec 1\n`,
    [`${group}/memory.current`]: `${v.current}\n`,
    [`${group}/memory.stat`]: `anon 10\nfile 20\ninactive_file ${v.inactive}\n`,
    [`${group}/io.stat`]: `8:0 rbytes=${v.rbytes} wbytes=${v.wbytes} rios=1 wios=1 dbytes=0 dios=0\n`,
  });
}

/** Host /proc files; cpu busy/idle in ticks, net bytes on eth0 (a veth carries the same again, to be left out). */
function hostProc(proc: string, v: { busy: number; idle: number; rx: number }) {
  write(proc, {
    stat: `cpu  ${v.busy} 0 0 ${v.idle} 0 0 0 0 0 0\ncpu0 1 1 1 1\n`,
    loadavg: "1.50 0.75 0.25 3/200 4242\n",
    meminfo: "MemTotal: 2000 kB\nMemFree: 100 kB\nMemAvailable: 500 kB\nSwapTotal: 100 kB\nSwapFree: 100 kB\n",
    "net/dev": `${netDev(v.rx, v.rx)}veth1a2b: ${v.rx} 1 0 0 0 0 0 0 ${v.rx} 1 0 0 0 0 0 0\n`,
  });
}

interface Fake {
  id: string;
  project: string;
  service: string;
  state?: string;
  pid?: number;
  restarts?: number;
  hostConfig?: Record<string, unknown>;
  oneoff?: boolean;
}

/** A scripted engine: the list, inspects (counted), one-shot stats (counted) and /info. */
class ScriptedEngine {
  containers: Fake[] = [];
  inspects = 0;
  statsCalls: string[] = [];
  stats = new Map<string, any>();
  listFails = false;
  dockerRoot: string | null = null;

  asEngine(): Engine {
    const self = this;
    return {
      async containers() {
        if (self.listFails) throw new Error("docker engine not reachable");
        return self.containers.map((c) => ({
          id: c.id,
          name: `${c.project}-${c.service}-1`,
          state: c.state ?? "running",
          project: c.project,
          service: c.service,
          labels: {
            "com.docker.compose.project": c.project,
            "com.docker.compose.service": c.service,
            ...(c.oneoff ? { "com.docker.compose.oneoff": "True" } : {}),
          },
        }));
      },
      async inspect(id: string) {
        self.inspects++;
        const c = self.containers.find((x) => x.id === id)!;
        return { State: { Pid: c.pid ?? 0 }, RestartCount: c.restarts ?? 0, HostConfig: c.hostConfig ?? {} };
      },
      async stats(id: string) {
        self.statsCalls.push(id);
        return self.stats.get(id);
      },
      async info() {
        if (!self.dockerRoot) throw new Error("no info");
        return { DockerRootDir: self.dockerRoot };
      },
    } as unknown as Engine;
  }
}

const ID = "a".repeat(64);
const ID2 = "b".repeat(64);

function setup() {
  const root = tempDir("sundeck-collect-");
  const proc = join(root, "proc");
  const cg = join(root, "cgroup");
  const clock = new FakeClock(1_800_000_000_000);
  const engine = new ScriptedEngine();
  hostProc(proc, { busy: 0, idle: 0, rx: 0 });
  const make = (o: { source?: "auto" | "engine"; inspectEveryMs?: number } = {}) =>
    createCollector({
      engine: engine.asEngine(),
      dataDir: root,
      log,
      now: () => clock.now(),
      elapsed: () => clock.now(),
      procRoot: proc,
      cgroupRoot: cg,
      ...o,
    });
  return { root, proc, cg, clock, engine, make };
}

describe("collector: cgroup v1", () => {
  it("reads the cgroupfs layout, attributes by compose labels and gives rates from the second tick", async () => {
    const { proc, cg, clock, engine, make } = setup();
    engine.containers = [
      { id: ID, project: "sundeck-shop", service: "web", pid: 42, restarts: 2, hostConfig: { NanoCpus: 5e8, Memory: 1 << 30 } },
    ];
    write(proc, {
      "42/cgroup": `4:memory:/docker/${ID}\n2:cpuacct:/docker/${ID}\n0::/docker/${ID}\n`,
      "42/net/dev": netDev(1000, 100),
    });
    v1(cg, `docker/${ID}`, { cpuNs: 1e9, usage: 5000, inactive: 1000, read: 0, write: 0 });
    const c = make();

    const first = await c.collect();
    expect(first.containers).toEqual([
      {
        t: clock.now(),
        containerId: ID,
        name: "sundeck-shop-web-1",
        app: "shop",
        service: "web",
        running: true,
        cpuPct: null,
        cpuLimitPct: null,
        memBytes: 4000,
        memLimitBytes: 1 << 30,
        netRxBps: null,
        netTxBps: null,
        blkReadBps: null,
        blkWriteBps: null,
        restarts: 2,
      },
    ]);

    clock.advance(10_000);
    v1(cg, `docker/${ID}`, { cpuNs: 6e9, usage: 9000, inactive: 1000, read: 40_960, write: 81_920 });
    write(proc, { "42/net/dev": netDev(11_000, 2100) });
    const [s] = (await c.collect()).containers;
    expect(s.cpuPct).toBeCloseTo(50);
    expect(s.cpuLimitPct).toBeCloseTo(100);
    expect(s).toMatchObject({ memBytes: 8000, netRxBps: 1000, netTxBps: 200, blkReadBps: 4096, blkWriteBps: 8192 });
    expect(engine.statsCalls).toEqual([]);
  });

  it("finds the systemd driver's scope under a co-mounted cpu,cpuacct without /proc/<pid>/cgroup", async () => {
    const { cg, clock, engine, make } = setup();
    // host networking: no /proc entry is needed for the network, so the default paths are enough
    engine.containers = [{ id: ID, project: "sundeck-shop", service: "web", pid: 77, hostConfig: { NetworkMode: "host" } }];
    const scope = `system.slice/docker-${ID}.scope`;
    v1(cg, scope, { cpuNs: 0, usage: 100, inactive: 0, read: 0, write: 0 }, "cpu,cpuacct");
    const c = make();
    await c.collect();
    clock.advance(10_000);
    v1(cg, scope, { cpuNs: 20e9, usage: 100, inactive: 0, read: 0, write: 0 }, "cpu,cpuacct");
    const [s] = (await c.collect()).containers;
    expect(s.cpuPct).toBeCloseTo(200);
    expect(s.cpuLimitPct).toBeNull();
    expect(s.netRxBps).toBeNull(); // the host's traffic is not this container's
    expect(engine.statsCalls).toEqual([]);
  });
});

describe("collector: cgroup v2", () => {
  it("reads the systemd scope: usage_usec, memory.current less inactive_file, io.stat", async () => {
    const { proc, cg, clock, engine, make } = setup();
    const scope = `system.slice/docker-${ID}.scope`;
    engine.containers = [{ id: ID, project: "sundeck-blog", service: "db", pid: 9 }];
    write(proc, { "9/cgroup": `0::/${scope}\n`, "9/net/dev": netDev(0, 0) });
    v2(cg, scope, { usec: 0, current: 10_000, inactive: 2500, rbytes: 0, wbytes: 0 });
    const c = make();
    expect((await c.collect()).containers[0]).toMatchObject({ app: "blog", service: "db", memBytes: 7500, cpuPct: null });
    clock.advance(10_000);
    v2(cg, scope, { usec: 2_500_000, current: 10_000, inactive: 2500, rbytes: 10_000, wbytes: 0 });
    const [s] = (await c.collect()).containers;
    expect(s.cpuPct).toBeCloseTo(25);
    expect(s).toMatchObject({ blkReadBps: 1000, blkWriteBps: 0, netRxBps: 0 });
    expect(engine.statsCalls).toEqual([]);
  });

  it("follows /proc/<pid>/cgroup to a custom parent", async () => {
    const { proc, cg, engine, make } = setup();
    const group = `custom.slice/user-1000.slice/${ID}`;
    engine.containers = [{ id: ID, project: "sundeck-blog", service: "db", pid: 9 }];
    write(proc, { "9/cgroup": `0::/${group}\n`, "9/net/dev": netDev(0, 0) });
    v2(cg, group, { usec: 0, current: 123, inactive: 0, rbytes: 0, wbytes: 0 });
    expect((await make().collect()).containers[0].memBytes).toBe(123);
    expect(engine.statsCalls).toEqual([]);
  });
});

describe("collector: restarts and fallbacks", () => {
  it("gives no rate when counters go backwards, then inspects again for the new restart count", async () => {
    const { proc, cg, clock, engine, make } = setup();
    engine.containers = [{ id: ID, project: "sundeck-shop", service: "web", pid: 42, restarts: 0 }];
    write(proc, { "42/cgroup": `2:cpuacct:/docker/${ID}\n`, "42/net/dev": netDev(5000, 5000) });
    v1(cg, `docker/${ID}`, { cpuNs: 90e9, usage: 1, inactive: 0, read: 0, write: 0 });
    const c = make();
    await c.collect();
    expect(engine.inspects).toBe(1);

    clock.advance(10_000);
    engine.containers[0].restarts = 1;
    v1(cg, `docker/${ID}`, { cpuNs: 1e9, usage: 1, inactive: 0, read: 0, write: 0 });
    write(proc, { "42/net/dev": netDev(10, 10) });
    const back = (await c.collect()).containers[0];
    expect(back).toMatchObject({ cpuPct: null, netRxBps: null, restarts: 0 });
    expect(engine.inspects).toBe(1); // inspects are cached, not redone each tick

    clock.advance(10_000);
    v1(cg, `docker/${ID}`, { cpuNs: 6e9, usage: 1, inactive: 0, read: 0, write: 0 });
    const after = (await c.collect()).containers[0];
    expect(after.cpuPct).toBeCloseTo(50);
    expect(after.restarts).toBe(1);
    expect(engine.inspects).toBe(2);
  });

  it("re-inspects each container about once a minute even when nothing changed", async () => {
    const { engine, clock, make } = setup();
    engine.containers = [{ id: ID, project: "sundeck-shop", service: "web", state: "exited" }];
    const c = make({ inspectEveryMs: 60_000 });
    for (let i = 0; i < 6; i++) {
      await c.collect();
      clock.advance(10_000);
    }
    expect(engine.inspects).toBe(1);
    for (let i = 0; i < 6; i++) {
      await c.collect();
      clock.advance(10_000);
    }
    expect(engine.inspects).toBe(2);
  });

  it("falls back to the engine's stats when the cgroup files are missing, with the same fields", async () => {
    const { proc, clock, engine, make } = setup();
    engine.containers = [
      { id: ID, project: "sundeck-shop", service: "web", pid: 42, hostConfig: { CpuQuota: 50_000, CpuPeriod: 100_000 } },
    ];
    write(proc, { "42/cgroup": `2:cpuacct:/docker/${ID}\n`, "42/net/dev": netDev(0, 0) });
    const reading = (at: number, cpuNs: number, rx: number) => ({
      read: new Date(at).toISOString(),
      cpu_stats: { cpu_usage: { total_usage: cpuNs } },
      memory_stats: { usage: 3000, stats: { total_inactive_file: 1000 } },
      networks: { eth0: { rx_bytes: rx, tx_bytes: 0 } },
      blkio_stats: { io_service_bytes_recursive: [] },
    });
    engine.stats.set(ID, reading(clock.now() - 500, 0, 0));
    const c = make();
    expect((await c.collect()).containers[0]).toMatchObject({ memBytes: 2000, cpuPct: null });
    // the engine's own reading times give the interval, not the tick times
    engine.stats.set(ID, reading(clock.now() + 9500, 4e9, 20_000));
    clock.advance(10_000);
    const [s] = (await c.collect()).containers;
    expect(s.cpuPct).toBeCloseTo(40);
    expect(s.cpuLimitPct).toBeCloseTo(80);
    expect(s).toMatchObject({ netRxBps: 2000, blkReadBps: 0 });
    expect(engine.statsCalls).toEqual([ID, ID]);
  });

  it("takes the engine's answer without a reading (zero time, zero counters) as a gap: no 0 % CPU, no spike after it", async () => {
    const { proc, clock, engine, make } = setup();
    engine.containers = [{ id: ID, project: "sundeck-shop", service: "web", pid: 42 }];
    write(proc, { "42/cgroup": `2:cpuacct:/docker/${ID}\n`, "42/net/dev": netDev(0, 0) });
    const reading = (at: number, cpuNs: number) => ({
      read: new Date(at).toISOString(),
      cpu_stats: { cpu_usage: { total_usage: cpuNs } },
      memory_stats: { usage: 3000, stats: { total_inactive_file: 1000 } },
    });
    // what dockerd 20.10 answers when its stats collector has nothing for the container (seen on this host)
    const none = {
      read: "0001-01-01T00:00:00Z",
      preread: "0001-01-01T00:00:00Z",
      pids_stats: {},
      blkio_stats: { io_service_bytes_recursive: null, io_serviced_recursive: null },
      num_procs: 0,
      storage_stats: {},
      cpu_stats: { cpu_usage: { total_usage: 0, usage_in_kernelmode: 0, usage_in_usermode: 0 }, throttling_data: {} },
      precpu_stats: { cpu_usage: { total_usage: 0, usage_in_kernelmode: 0, usage_in_usermode: 0 }, throttling_data: {} },
      memory_stats: {},
    };
    const c = make({ source: "engine" });
    const tick = async (stats: unknown) => {
      engine.stats.set(ID, stats);
      clock.advance(10_000);
      return (await c.collect()).containers[0];
    };
    await tick(reading(clock.now() + 10_000, 1e9));
    expect(await tick(reading(clock.now() + 10_000, 11e9))).toMatchObject({ cpuPct: 100, memBytes: 2000 });
    expect(await tick(none)).toMatchObject({ cpuPct: null, memBytes: null, netRxBps: null, blkReadBps: null });
    // the next reading starts the rates afresh (no spike of the whole CPU time since start), the one after has one
    expect(await tick(reading(clock.now() + 10_000, 31e9))).toMatchObject({ cpuPct: null, memBytes: 2000 });
    expect(await tick(reading(clock.now() + 10_000, 41e9))).toMatchObject({ cpuPct: 100, memBytes: 2000 });
  });

  it("uses the engine when told to, even with readable cgroup files", async () => {
    const { proc, cg, engine, make } = setup();
    engine.containers = [{ id: ID, project: "sundeck-shop", service: "web", pid: 42 }];
    write(proc, { "42/cgroup": `2:cpuacct:/docker/${ID}\n`, "42/net/dev": netDev(0, 0) });
    v1(cg, `docker/${ID}`, { cpuNs: 1, usage: 1, inactive: 0, read: 0, write: 0 });
    engine.stats.set(ID, { memory_stats: { usage: 77 }, cpu_stats: { cpu_usage: { total_usage: 1 } } });
    expect((await make({ source: "engine" }).collect()).containers[0].memBytes).toBe(77);
    expect(engine.statsCalls).toEqual([ID]);
  });

  it("leaves out other projects and one-off containers, keeps replicas apart, reports stopped ones without values", async () => {
    const { proc, cg, engine, make } = setup();
    engine.containers = [
      { id: ID, project: "sundeck-shop", service: "web", pid: 42 },
      { id: ID2, project: "sundeck-shop", service: "web", pid: 43 },
      { id: "c".repeat(64), project: "sundeck-shop", service: "worker", state: "exited", restarts: 3 },
      { id: "d".repeat(64), project: "someone-else", service: "web", pid: 44 },
      { id: "e".repeat(64), project: "sundeck-shop", service: "web", pid: 45, oneoff: true },
    ];
    for (const [id, pid] of [
      [ID, 42],
      [ID2, 43],
    ] as const) {
      write(proc, { [`${pid}/cgroup`]: `2:cpuacct:/docker/${id}\n`, [`${pid}/net/dev`]: netDev(0, 0) });
      v1(cg, `docker/${id}`, { cpuNs: 1, usage: pid, inactive: 0, read: 0, write: 0 });
    }
    const tick = await make().collect();
    expect(tick.containers.map((s) => [s.containerId[0], s.service, s.running, s.memBytes, s.restarts])).toEqual([
      ["a", "web", true, 42, 0],
      ["b", "web", true, 43, 0],
      ["c", "worker", false, null, 3],
    ]);
  });

  it("keeps collecting the host when the engine does not answer", async () => {
    const { engine, make } = setup();
    engine.listFails = true;
    const tick = await make().collect();
    expect(tick.containers).toEqual([]);
    expect(tick.host.load1).toBe(1.5);
  });
});

describe("collector: host", () => {
  it("reads CPU, load, memory, swap, disks and the physical network rate", async () => {
    const { root, proc, clock, engine, make } = setup();
    engine.dockerRoot = root;
    hostProc(proc, { busy: 100, idle: 900, rx: 1000 });
    const c = make();
    const first = (await c.collect()).host;
    expect(first).toMatchObject({ cpuPct: null, netRxBps: null, load1: 1.5, load5: 0.75, load15: 0.25 });
    expect(first).toMatchObject({ memTotalBytes: 2000 * 1024, memUsedBytes: 1500 * 1024, swapUsedBytes: 0 });
    expect(first.diskTotalBytes).toBeGreaterThan(0);
    expect(first.dockerDiskTotalBytes).toBe(first.diskTotalBytes);

    clock.advance(10_000);
    hostProc(proc, { busy: 400, idle: 1600, rx: 51_000 });
    const second = (await c.collect()).host;
    expect(second.cpuPct).toBeCloseTo(30);
    expect(second.netRxBps).toBe(5000); // the veth copy is not counted
  });

  it("gives nulls for what cannot be read", async () => {
    const { proc, make } = setup();
    rmSync(join(proc, "meminfo"));
    rmSync(join(proc, "loadavg"));
    const host = (await make().collect()).host;
    expect(host).toMatchObject({ memUsedBytes: null, swapTotalBytes: null, load1: null });
    expect(host.dockerDiskFreeBytes).toBeNull(); // /info failed
  });
});
