/**
 * Child process of the metrics collection benchmark: the real collector on the real engine, one tick every
 * `--interval` seconds until killed. Prints one JSON line per tick (duration, containers sampled, how many had a CPU
 * rate, JS heap in use) so the parent can check it measured something and time its process from outside.
 *
 *   bun scripts/bench/metrics-collector.ts [--interval 10] [--source auto|engine]
 */
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { createEngine } from "../../src/docker/engine";
import { LogSink } from "../../src/log/logger";
import { createCollector } from "../../src/modules/metrics/collect";

const { values: v } = parseArgs({
  options: { interval: { type: "string", default: "10" }, source: { type: "string", default: "auto" } },
});
const intervalMs = Number(v.interval) * 1000;
const source = v.source === "engine" ? "engine" : "auto";
const log = new LogSink({ stdout: false }).logger("metrics");
const collector = createCollector({ engine: createEngine(), dataDir: tmpdir(), log, source });

async function tick(): Promise<void> {
  const start = performance.now();
  const t = await collector.collect();
  const ms = performance.now() - start;
  const withCpu = t.containers.filter((c) => c.cpuPct !== null).length;
  const heap = process.memoryUsage().heapUsed;
  console.log(JSON.stringify({ ms, containers: t.containers.length, withCpu, hostCpu: t.host.cpuPct, heap }));
}

// ticks on a fixed schedule, like the metrics service: a slow tick delays the next, never overlaps it
let next = performance.now();
for (;;) {
  await tick();
  next += intervalMs;
  await Bun.sleep(Math.max(0, next - performance.now()));
}
