/**
 * Metrics collection benchmark (issue 12): N idle containers (busybox `sleep`) labelled as the compose projects of
 * ten apps, then one after the other
 *   - the collector in its own process, one tick every 10 s for `--minutes` (cgroup files, the cheap path),
 *   - the same with the Engine API stats fallback forced, for `--fallback-minutes`,
 *   - `docker stats --no-stream` on the same containers, once per tick, for `--stats-ticks` ticks,
 * reporting the collector's CPU time over wall time (goal: under 2 % of one core) and resident memory, and per tick
 * the docker CLI's wall and CPU time; dockerd's CPU over each phase when its /proc entry is readable.
 *
 *   bun scripts/bench/metrics.ts [--containers 100] [--minutes 5] [--fallback-minutes 1] [--stats-ticks 6]
 *
 * Exit status 1 when the collector missed a container or the 2 % goal, 2 when the benchmark could not run.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { EngineTransport, engineTarget } from "../../src/docker/transport";
import { removeProject } from "./docker-cleanup";
import { cpuOf, dockerdPid, machineCpu, rssOf } from "./streams-server";

const { values: v } = parseArgs({
  options: {
    containers: { type: "string", default: "100" },
    apps: { type: "string", default: "10" },
    minutes: { type: "string", default: "5" },
    "fallback-minutes": { type: "string", default: "1" },
    "stats-ticks": { type: "string", default: "6" },
    interval: { type: "string", default: "10" },
    idle: { type: "string", default: "30" },
    keep: { type: "boolean", default: false },
  },
});
const O = {
  containers: Number(v.containers),
  apps: Number(v.apps),
  minutes: Number(v.minutes),
  fallbackMinutes: Number(v["fallback-minutes"]),
  statsTicks: Number(v["stats-ticks"]),
  interval: Number(v.interval),
  idle: Number(v.idle),
};
for (const [k, n] of Object.entries(O)) {
  if (!(n >= 0) || (["containers", "apps", "interval"].includes(k) && n === 0)) {
    console.error(`--${k} must be a positive number`);
    process.exit(2);
  }
}

const IMAGE = "sundeck-test/busybox:latest";
const projects = Array.from({ length: O.apps }, (_, i) => `sundeck-bench-metrics-${i + 1}`);
const http = new EngineTransport(engineTarget());
const dockerd = dockerdPid();
const ids: string[] = [];

function cleanup(): void {
  for (const p of projects) removeProject(p);
}
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});

/** Create and start the containers, ten at a time, straight on the Engine API. */
async function startContainers(): Promise<void> {
  let next = 0;
  const one = async (i: number) => {
    const project = projects[i % O.apps];
    const number = Math.floor(i / O.apps) + 1;
    const labels = {
      "com.docker.compose.project": project,
      "com.docker.compose.service": "idle",
      "com.docker.compose.container-number": String(number),
    };
    const body = { Image: IMAGE, Cmd: ["sleep", "86400"], Labels: labels, HostConfig: { Init: false } };
    const r = await http.json("POST", "/containers/create", { query: { name: `${project}-idle-${number}` }, body });
    await http.json("POST", `/containers/${r.Id}/start`);
    ids.push(r.Id);
  };
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < O.containers) await one(next++);
    }),
  );
}

const sec = () => performance.now() / 1000;

interface CollectorPhase {
  name: string;
  wall: number;
  cpu: number;
  rssStart: number;
  rssPeak: number;
  rssEnd: number;
  ticks: Array<{ ms: number; containers: number; withCpu: number; heap: number }>;
  dockerd: number | null;
  machine: number;
}

/** The collector in its own process for `minutes`, measured from after its first tick (start-up left out). */
async function collectorPhase(name: string, source: string, minutes: number): Promise<CollectorPhase> {
  const child = Bun.spawn(
    [process.execPath, resolve(import.meta.dir, "metrics-collector.ts"), "--interval", String(O.interval), "--source", source],
    { stdout: "pipe", stderr: "inherit" },
  );
  const ticks: CollectorPhase["ticks"] = [];
  const reader = (async () => {
    let buf = "";
    for await (const chunk of child.stdout as unknown as AsyncIterable<Uint8Array>) {
      buf += new TextDecoder().decode(chunk);
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        ticks.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
      }
    }
  })();
  while (ticks.length === 0) {
    if (child.exitCode !== null) throw new Error(`collector exited with ${child.exitCode}`);
    await Bun.sleep(50);
  }
  const first = ticks.length;
  const t0 = sec();
  const cpu0 = cpuOf(child.pid);
  const d0 = dockerd ? cpuOf(dockerd) : null;
  const m0 = machineCpu();
  const rssStart = rssOf(child.pid).rss;
  let rssPeak = rssStart;
  const end = t0 + minutes * 60;
  while (sec() < end) {
    await Bun.sleep(Math.min(1000, Math.max(0, (end - sec()) * 1000)));
    rssPeak = Math.max(rssPeak, rssOf(child.pid).rss);
  }
  const cpu = cpuOf(child.pid) - cpu0;
  const dockerdCpu = dockerd && d0 !== null ? cpuOf(dockerd) - d0 : null;
  const machine = machineCpu() - m0;
  const wall = sec() - t0;
  const rssEnd = rssOf(child.pid).rss;
  child.kill();
  await child.exited;
  await reader.catch(() => {});
  return { name, wall, cpu, rssStart, rssPeak, rssEnd, ticks: ticks.slice(first), dockerd: dockerdCpu, machine };
}

interface StatsPhase {
  wall: number;
  ticks: Array<{ wall: number; cpu: number; lines: number }>;
  dockerd: number | null;
}

/** `docker stats --no-stream` on the same containers once per interval. */
async function statsPhase(): Promise<StatsPhase> {
  const ticks: StatsPhase["ticks"] = [];
  const t0 = sec();
  const d0 = dockerd ? cpuOf(dockerd) : null;
  for (let i = 0; i < O.statsTicks; i++) {
    const start = sec();
    const p = Bun.spawn(["docker", "stats", "--no-stream", "--format", "{{.ID}} {{.CPUPerc}} {{.MemUsage}}", ...ids], {
      stdout: "pipe",
      stderr: "inherit",
    });
    const out = await new Response(p.stdout).text();
    await p.exited;
    const ru = p.resourceUsage();
    const cpu = ru ? (Number(ru.cpuTime.user) + Number(ru.cpuTime.system)) / 1e6 : Number.NaN;
    ticks.push({ wall: sec() - start, cpu, lines: out.trim().split("\n").filter(Boolean).length });
    const wait = start + O.interval - sec();
    if (i < O.statsTicks - 1 && wait > 0) await Bun.sleep(wait * 1000);
  }
  return { wall: sec() - t0, ticks, dockerd: dockerd && d0 !== null ? cpuOf(dockerd) - d0 : null };
}

/** dockerd's CPU with the containers up and nothing measuring them, per second. */
async function idlePhase(): Promise<{ dockerd: number | null; machine: number }> {
  const d0 = dockerd ? cpuOf(dockerd) : null;
  const m0 = machineCpu();
  const t0 = sec();
  await Bun.sleep(O.idle * 1000);
  const wall = sec() - t0;
  return { dockerd: dockerd && d0 !== null ? (cpuOf(dockerd) - d0) / wall : null, machine: (machineCpu() - m0) / wall };
}

const f = (n: number | null, d = 2) => (n === null || Number.isNaN(n) ? "n/a" : n.toFixed(d));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const max = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);

async function main(): Promise<number> {
  if (!(await http.json("GET", `/images/${encodeURIComponent(IMAGE)}/json`).catch(() => null))) {
    console.error(`image ${IMAGE} missing: run bun scripts/test-images.ts`);
    return 2;
  }
  cleanup();
  const startAt = sec();
  await startContainers();
  console.log(`${ids.length} containers in ${O.apps} projects started in ${f(sec() - startAt, 1)} s`);

  const idle = O.idle > 0 ? await idlePhase() : null;
  const phases: CollectorPhase[] = [];
  phases.push(await collectorPhase("collector, cgroup files", "auto", O.minutes));
  if (O.fallbackMinutes > 0) phases.push(await collectorPhase("collector, engine stats fallback", "engine", O.fallbackMinutes));
  const stats = O.statsTicks > 0 ? await statsPhase() : null;

  let failed = false;
  console.log(`\nmachine: ${navigator.hardwareConcurrency} CPUs; dockerd CPU ${dockerd ? "read" : "not readable"}`);
  if (idle)
    console.log(
      `idle (containers up, nothing measuring), ${O.idle} s: dockerd ${f(idle.dockerd, 4)} s/s, machine ${f(idle.machine, 3)} s/s`,
    );
  console.log(
    "\n| phase | wall s | ticks | tick ms mean / max | CPU % of a core | RSS MiB start / peak / end | JS heap MiB | dockerd CPU s/s |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const p of phases) {
    const pct = (p.cpu / p.wall) * 100;
    const complete = p.ticks.filter((t) => t.containers >= ids.length && t.withCpu >= ids.length).length;
    if (complete < p.ticks.length) {
      failed = true;
      console.error(`${p.name}: ${p.ticks.length - complete} of ${p.ticks.length} ticks missed a container or its CPU rate`);
    }
    if (p.name.includes("cgroup") && pct >= 2) failed = true;
    const ms = p.ticks.map((t) => t.ms);
    const heap = (p.ticks.at(-1)?.heap ?? Number.NaN) / 2 ** 20;
    console.log(
      `| ${p.name} | ${f(p.wall, 0)} | ${p.ticks.length} | ${f(mean(ms), 1)} / ${f(max(ms), 1)} | ${f(pct, 3)} | ` +
        `${f(p.rssStart, 1)} / ${f(p.rssPeak, 1)} / ${f(p.rssEnd, 1)} | ${f(heap, 1)} | ${p.dockerd === null ? "n/a" : f(p.dockerd / p.wall, 4)} |`,
    );
  }
  if (stats) {
    const cli = stats.ticks.map((t) => t.cpu);
    const wall = stats.ticks.map((t) => t.wall);
    const perTickCli = mean(cli);
    console.log(
      `\ndocker stats --no-stream, ${stats.ticks.length} ticks of ${ids.length} containers: wall ${f(mean(wall), 2)} s mean / ` +
        `${f(max(wall), 2)} max per tick; CLI CPU ${f(perTickCli, 3)} s per tick (${f((perTickCli / O.interval) * 100, 2)} % of a ` +
        `core at one tick per ${O.interval} s); dockerd ${stats.dockerd === null ? "n/a" : `${f(stats.dockerd / stats.wall, 4)} s/s`}; ` +
        `lines ${stats.ticks.map((t) => t.lines).join(",")}`,
    );
    const main = phases[0];
    const perTick = main.cpu / Math.max(1, main.ticks.length);
    console.log(`collector CPU per tick: ${f(perTick * 1000, 1)} ms (docker CLI: ${f(perTickCli * 1000, 0)} ms)`);
  }
  return failed ? 1 : 0;
}

let code = 2;
try {
  code = await main();
} catch (e) {
  console.error(`benchmark failed: ${e instanceof Error ? e.message : e}`);
} finally {
  if (!v.keep) cleanup();
}
process.exit(code);
