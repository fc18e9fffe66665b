/**
 * Deploy benchmark: a Sundeck deploy against a bare `docker-compose up -d` of the same file, in one run.
 *
 *   bun scripts/bench/deploy.ts [--runs 10] [--services 3] [--poll-ms 50] [--max-minutes 10]
 *
 * Runs alternate (bare, Sundeck, bare, Sundeck, ...) after one warm-up of each, and each side is timed from its start
 * (spawn / POST) until every container runs and is healthy by Sundeck's own readiness rule (no settle period). The
 * target (issue 3) is a median overhead under 10%. See scripts/bench/README.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, release, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { prepare } from "../../src/compose/prepare";
import { checkDocker, compose, freePorts, ownedLeftovers, ReadyWatch, removeOwned } from "./deploy-docker";
import { type BareSample, med, report, type SundeckSample } from "./deploy-report";
import { deploy, remove, type ServerCall, type Sundeck, startSundeck } from "./deploy-sundeck";
import { fmtMs, measure } from "./measure";

const TARGET_PCT = 10;
const IMAGE = "sundeck-test/web:latest";
const BARE = "bench-bare";
const UP_TIMEOUT_MS = 120_000;
const READY_TIMEOUT_MS = 60_000;
const DOWN_TIMEOUT_MS = 60_000;
/** Quiet time before each timed start, identical on both sides, so the previous teardown is not billed to it. */
const PAUSE_MS = 300;

interface Options {
  runs: number;
  services: number;
  pollMs: number;
  maxMs: number;
  /** Sundeck's settle period (0 here; the server's default is 2000). */
  settleMs: number;
}

function options(): Options {
  const { values: v } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      runs: { type: "string", default: "10" },
      services: { type: "string", default: "3" },
      "poll-ms": { type: "string", default: "50" },
      "max-minutes": { type: "string", default: "10" },
      "settle-ms": { type: "string", default: "0" },
    },
  });
  const o = {
    runs: Number(v.runs),
    services: Number(v.services),
    pollMs: Number(v["poll-ms"]),
    maxMs: Number(v["max-minutes"]) * 60_000,
    settleMs: Number(v["settle-ms"]),
  };
  const whole = (n: number, lo: number, hi: number) => Number.isInteger(n) && n >= lo && n <= hi;
  if (!whole(o.runs, 1, 100)) throw new Error("--runs must be a whole number from 1 to 100");
  if (!whole(o.services, 1, 30)) throw new Error("--services must be a whole number from 1 to 30");
  if (!whole(o.pollMs, 5, 1000)) throw new Error("--poll-ms must be a whole number from 5 to 1000");
  if (!(o.maxMs > 0)) throw new Error("--max-minutes must be positive");
  if (!whole(o.settleMs, 0, 60_000)) throw new Error("--settle-ms must be a whole number of ms from 0 to 60000");
  return o;
}

/** The user's file: N web services, each with a published port, a healthcheck and a short stop grace period. */
function composeFile(ports: number[]): string {
  return [
    "services:",
    ...ports.flatMap((port, i) => [
      `  web${i + 1}:`,
      `    image: ${IMAGE}`,
      "    restart: unless-stopped",
      "    ports:",
      `      - "${port}:8080"`,
      "    healthcheck:",
      // Debian's busybox nc has no -z: an HTTP probe with busybox wget is the equivalent check
      '      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/"]',
      "      interval: 1s",
      "      timeout: 2s",
      "      retries: 3",
      "    stop_grace_period: 1s",
    ]),
    "",
  ].join("\n");
}

/** Both sides start from the same state: none of the benchmark's containers or networks exist. */
async function clean(): Promise<void> {
  const left = await ownedLeftovers();
  if (left) {
    console.warn(`  warning: leftovers before a timed start (${left}); removing them`);
    await removeOwned();
  }
  await Bun.sleep(PAUSE_MS);
}

async function bareRun(o: Options, dir: string, services: string[]): Promise<BareSample> {
  await clean();
  const watch = new ReadyWatch(BARE, services, o.pollMs);
  const t0 = performance.now();
  try {
    const up = await compose(["-p", BARE, "-f", "docker-compose.yml", "up", "-d"], dir, UP_TIMEOUT_MS);
    if (up.code !== 0)
      throw new Error(`bare docker-compose up failed (exit ${up.code}): ${up.output.split("\n").slice(-3).join(" | ")}`);
    const ready = (await watch.readyAfter(t0 + up.exit, READY_TIMEOUT_MS)) - t0;
    return { firstLine: up.firstLine, exit: up.exit, ready };
  } finally {
    watch.stop();
    const down = await compose(["-p", BARE, "-f", "docker-compose.yml", "down", "-v", "--remove-orphans"], dir, DOWN_TIMEOUT_MS);
    if (down.code !== 0) {
      console.warn(`  warning: bare down failed (exit ${down.code}); removing by label`);
      await removeOwned();
    }
  }
}

async function sundeckRun(o: Options, s: Sundeck, slug: string, content: string, services: string[]): Promise<SundeckSample> {
  await clean();
  const watch = new ReadyWatch(`sundeck-${slug}`, services, o.pollMs);
  const from = s.calls.length;
  try {
    const r = await deploy(s, slug, content, UP_TIMEOUT_MS + READY_TIMEOUT_MS);
    const seenReady = (await watch.readyAfter(r.t0, 2000).catch(() => Number.NaN)) - r.t0;
    const calls = s.calls
      .slice(from)
      .map((c): ServerCall => ({ ...c, start: c.start - r.t0, end: c.end - r.t0, firstLine: (c.firstLine ?? Number.NaN) - r.t0 }))
      .filter((c) => c.end <= r.done);
    const up = calls.find((c) => c.op === "composeUp");
    if (!up) throw new Error(`deploy of ${slug} ran no compose up`);
    const images = calls.filter((c) => c.op === "imageExists");
    const polls = calls.filter((c) => c.op === "poll");
    const last = polls[polls.length - 1];
    return {
      accepted: r.accepted,
      started: r.started,
      logsFirstLine: r.firstCompose,
      spawn: up.start,
      firstLine: up.firstLine!,
      exit: up.end,
      seenReady,
      done: r.done,
      imageChecks: images.length,
      imageMs: images.reduce((acc, c) => acc + (c.end - c.start), 0),
      pulls: calls.filter((c) => c.op === "composePull").length,
      polls: polls.length,
      pollMs: polls.length ? polls.reduce((acc, c) => acc + (c.end - c.start), 0) / polls.length : Number.NaN,
      pollGap: med(polls.slice(1).map((c, k) => c.start - polls[k].end)),
      readyPoll: last ? last.end - up.end : Number.NaN,
      afterPoll: last ? r.done - last.end : Number.NaN,
    };
  } finally {
    watch.stop();
    await remove(s, slug, DOWN_TIMEOUT_MS).catch((e) => console.warn(`  warning: removing ${slug}: ${(e as Error).message}`));
  }
}

async function main() {
  const o = options();
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "bench-bare-"));
  let sundeck: Sundeck | null = null;
  let cleaning: Promise<void> | null = null;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await sundeck?.stop();
      const n = await removeOwned().catch(() => 0);
      if (n) console.log(`cleanup: removed ${n} leftover docker object(s)`);
      rmSync(dir, { recursive: true, force: true });
    })());
  process.on("SIGINT", () => {
    console.log("\ninterrupted: cleaning up");
    void cleanup().finally(() => process.exit(130));
  });
  try {
    const versions = await checkDocker([IMAGE]);
    const stale = await removeOwned();
    if (stale) console.log(`removed ${stale} docker object(s) an earlier run left behind`);
    const ports = freePorts(o.services);
    const content = composeFile(ports);
    const services = ports.map((_, i) => `web${i + 1}`);
    writeFileSync(join(dir, "docker-compose.yml"), content);
    sundeck = await startSundeck({ settleMs: o.settleMs });
    const cpu = cpus();
    console.log(
      `${cpu.length} cores (${cpu[0]?.model.trim() ?? "?"}), linux ${release()}, bun ${Bun.version}; ` +
        `docker engine ${versions.engine}, storage ${versions.storage}; docker-compose ${versions.compose} (sundeck drives ${sundeck.compose})`,
    );
    console.log(
      `${o.services} services of ${IMAGE} on ports ${ports.join(", ")}, healthcheck every 1s; ${o.runs} runs per side ` +
        `after one warm-up each; readiness poll ${o.pollMs} ms on both sides; sundeck settle ${o.settleMs} ms`,
    );

    const policy = {
      appDir: join(sundeck.ctx.config.apps_dir, "bench-x"),
      appsDir: sundeck.ctx.config.apps_dir,
      dataDir: sundeck.ctx.config.data_dir,
    };
    const prep = measure(() => prepare(content, "", policy), { warmup: 50, iterations: 2000, maxMs: 2000, minIterations: 100 });

    console.log("\nwarm-up (not counted)");
    const wb = await bareRun(o, dir, services);
    const ws = await sundeckRun(o, sundeck, "bench-w", content, services);
    console.log(`  bare ${fmtMs(wb.ready)} ms, sundeck ${fmtMs(ws.done)} ms`);

    const bare: BareSample[] = [];
    const ours: SundeckSample[] = [];
    for (let i = 1; i <= o.runs; i++) {
      if (performance.now() - started > o.maxMs) {
        console.warn(`  stopping after ${i - 1} runs: --max-minutes ${o.maxMs / 60_000} reached`);
        break;
      }
      const x = await bareRun(o, dir, services);
      const y = await sundeckRun(o, sundeck, `bench-${i}`, content, services);
      bare.push(x);
      ours.push(y);
      console.log(
        `  run ${i}/${o.runs}: bare ${fmtMs(x.ready)} ms (compose exit ${fmtMs(x.exit)}), ` +
          `sundeck ${fmtMs(y.done)} ms (compose spawned ${fmtMs(y.spawn)}, exit ${fmtMs(y.exit)}, seen ready ${fmtMs(y.seenReady)})`,
      );
    }
    if (bare.length === 0) throw new Error("no run finished within --max-minutes");
    const ok = report({ services: o.services, pollMs: o.pollMs, targetPct: TARGET_PCT }, bare, ours, {
      p50: prep.p50 * 1000,
      p99: prep.p99 * 1000,
    });
    console.log(`\ntotal time ${((performance.now() - started) / 1000).toFixed(0)} s`);
    process.exitCode = ok ? 0 : 1;
  } finally {
    await cleanup();
  }
}

main().catch((e) => {
  console.error(`deploy benchmark failed: ${(e as Error).message}`);
  process.exitCode = 2;
});
