/**
 * The collector on the real engine: a container spinning a core reads about 100 % CPU, one limited to half a core
 * about 50 % of a core and 100 % of its limit, attributed to the app and service of its compose labels. On this
 * host the cgroup files are read (no stats request reaches the engine); the engine-stats fallback, forced, agrees.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { projectName } from "../../../src/docker/naming";
import type { Engine } from "../../../src/docker/types";
import { createCollector } from "../../../src/modules/metrics/collect";
import type { ContainerSample } from "../../../src/modules/metrics/samples";
import { dockerOk, ensureTestImages, removeProject, requireDocker, TEST_IMAGES, uniqueName } from "../../helpers/docker";
import { until } from "../../helpers/http";

const SLUG = uniqueName("sdt-metrics");
const PROJECT = projectName(SLUG);
const log: any = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
let engine: Engine;
let statsRequests = 0;
const ids: Record<string, string> = {};

/** Start a container labelled as service `service` of the test app, spinning a core. */
function spin(service: string, ...flags: string[]): Promise<string> {
  const labels = ["--label", `com.docker.compose.project=${PROJECT}`, "--label", `com.docker.compose.service=${service}`];
  return dockerOk("run", "-d", ...labels, ...flags, TEST_IMAGES.busybox, "sh", "-c", "while :; do :; done");
}

beforeAll(async () => {
  const real = await requireDocker();
  // count the stats requests that reach the engine, to tell which source the collector used
  engine = {
    ...real,
    stats: (id) => {
      statsRequests++;
      return real.stats(id);
    },
  };
  await ensureTestImages();
  await removeProject(PROJECT);
  ids.spin = await spin("spin");
  ids.half = await spin("half", "--cpus", "0.5");
});

afterAll(async () => {
  await removeProject(PROJECT);
});

/**
 * Collect about once a second until each container has shown its steady load in some tick (other work on the host
 * can hold a spinning container below a core for a while); the samples of those ticks, by service.
 */
async function steady(source: "auto" | "engine"): Promise<Record<string, ContainerSample>> {
  const collector = createCollector({ engine, dataDir: import.meta.dir, log, source });
  const near = (v: number | null | undefined, want: number, tol: number) => v != null && Math.abs(v - want) <= tol;
  const ok: Record<string, (s: ContainerSample) => boolean> = {
    spin: (s) => near(s.cpuPct, 100, 30),
    half: (s) => near(s.cpuPct, 50, 15) && near(s.cpuLimitPct, 100, 30),
  };
  const found: Record<string, ContainerSample> = {};
  return until(
    async () => {
      const tick = await collector.collect();
      const mine = tick.containers.filter((s) => s.app === SLUG);
      for (const s of mine) if (!found[s.service] && ok[s.service]?.(s)) found[s.service] = s;
      if (found.spin && found.half) return found;
      // the last readings, for the timeout message (a saturated host holds a spinning container below a core)
      const seen = mine.map((s) => `${s.service} ${s.cpuPct?.toFixed(0)}%/${s.cpuLimitPct?.toFixed(0)}%`).join(", ");
      throw new Error(`last tick: ${seen}; host CPU ${tick.host.cpuPct?.toFixed(0)}%`);
    },
    { timeout: 45_000, every: 1000, what: `steady CPU readings (${source})` },
  );
}

describe("metrics collection on the real engine", () => {
  let fromFiles: Record<string, ContainerSample>;

  it("reads a spinning core as about 100 % and a half-core limit as about 100 % of it, from the cgroup files", async () => {
    fromFiles = await steady("auto");
    expect(statsRequests).toBe(0);
    const { spin, half } = fromFiles;
    expect(spin).toMatchObject({ containerId: ids.spin, app: SLUG, service: "spin", running: true, restarts: 0 });
    expect(spin.cpuLimitPct).toBeNull();
    expect(spin.memLimitBytes).toBeNull();
    expect(spin.memBytes).toBeGreaterThan(0);
    expect(half.containerId).toBe(ids.half);
    expect(spin.netRxBps).not.toBeNull();
    expect(spin.blkReadBps).not.toBeNull();
  });

  it("gives the same through the engine's stats when told to", async () => {
    const viaEngine = await steady("engine");
    expect(statsRequests).toBeGreaterThan(0);
    for (const service of ["spin", "half"]) {
      const a = fromFiles[service];
      const b = viaEngine[service];
      expect(b.containerId).toBe(a.containerId);
      expect(b.memBytes).toBeGreaterThan(0);
      // the same process, idle apart from its loop: memory within a factor of two either way
      expect(b.memBytes! / a.memBytes!).toBeGreaterThan(0.5);
      expect(b.memBytes! / a.memBytes!).toBeLessThan(2);
      expect(b.netRxBps).not.toBeNull();
    }
  });

  it("counts restarts of a crashing container without waiting for the once-a-minute inspect", async () => {
    const labels = ["--label", `com.docker.compose.project=${PROJECT}`, "--label", "com.docker.compose.service=crash"];
    await dockerOk("run", "-d", "--restart", "always", ...labels, TEST_IMAGES.busybox, "sh", "-c", "sleep 1; exit 3");
    const collector = createCollector({ engine, dataDir: import.meta.dir, log });
    const crash = await until(
      async () => {
        const s = (await collector.collect()).containers.find((c) => c.app === SLUG && c.service === "crash");
        return s && (s.restarts ?? 0) >= 2 ? s : null;
      },
      { timeout: 30_000, every: 250, what: "two restarts counted" },
    );
    expect(crash.restarts).toBeGreaterThanOrEqual(2);
  });

  it("reads the host: CPU, memory, and the disks of the data dir and the Docker root", async () => {
    const collector = createCollector({ engine, dataDir: import.meta.dir, log });
    await collector.collect();
    const { host } = await until(
      async () => {
        const t = await collector.collect();
        return t.host.cpuPct !== null ? t : null;
      },
      { timeout: 10_000, every: 200, what: "a host CPU reading" },
    );
    expect(host.cpuPct).toBeGreaterThan(0);
    expect(host.memTotalBytes).toBeGreaterThan(host.memUsedBytes!);
    expect(host.diskTotalBytes).toBeGreaterThan(0);
    expect(host.dockerDiskTotalBytes).toBeGreaterThan(0);
    expect(host.load1).not.toBeNull();
  });
});
