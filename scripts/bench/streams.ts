/**
 * Container log streams under load (issue 17): the compiled server in its own process, chatty containers printing
 * numbered lines, and side by side in one run
 *   - baseline: 10 followers of one container,
 *   - 1,000 followers of one container,
 *   - 100 followers each of 10 containers (10 apps, 1,000 streams),
 * each reporting the server's resident memory before, at its peak, after the streams closed, after the feeds'
 * linger and 45 s after the last stream closed (issue 24's bar: back within 5 MiB of before by then), its CPU per
 * second of the window, and whether every follower got every line exactly once. Memory is read
 * from outside (/proc/<pid>/status); the bench never makes the server collect garbage (the server's log hub does so
 * itself, once, when its last feed stops).
 *
 *   bun run build && bun scripts/bench/streams.ts [--window 15] [--quick]
 *
 * Exit status 1 when a line was missing or duplicated or a stream failed, 2 when the benchmark could not run.
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { AppView } from "../../src/shared/apps";
import { removeProject } from "./docker-cleanup";
import { EngineFollower, Follower, StallMeter } from "./streams-follower";
import {
  cpuOf,
  deployApp,
  dockerdPid,
  leftoverProjects,
  machineCpu,
  removeApp,
  rssOf,
  type Server,
  type StreamsInfo,
  startServer,
  waitFor,
} from "./streams-server";

const { values: v } = parseArgs({
  options: {
    window: { type: "string" },
    followers: { type: "string" },
    "per-container": { type: "string" },
    containers: { type: "string", default: "10" },
    baseline: { type: "string", default: "10" },
    rate: { type: "string", default: "50" },
    tail: { type: "string", default: "10" },
    batch: { type: "string", default: "100" },
    rounds: { type: "string", default: "1" },
    idle: { type: "string" },
    quick: { type: "boolean", default: false },
    "no-linger": { type: "boolean", default: false },
    "no-warmup": { type: "boolean", default: false },
    binary: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
const quick = v.quick === true;
const O = {
  window: Number(v.window ?? (quick ? 5 : 15)),
  followers: Number(v.followers ?? (quick ? 200 : 1000)),
  perContainer: Number(v["per-container"] ?? (quick ? 20 : 100)),
  containers: Number(v.containers),
  baseline: Number(v.baseline),
  rate: Number(v.rate),
  tail: Number(v.tail),
  batch: Number(v.batch),
  rounds: Number(v.rounds),
  idle: Number(v.idle ?? (quick ? 0 : 60)),
  linger: !(v["no-linger"] || quick),
  warmup: !(v["no-warmup"] || quick),
  binary: resolve(v.binary ?? resolve(import.meta.dir, "../../dist/sundeck")),
  keep: v.keep === true,
};
for (const [k, n] of Object.entries(O)) {
  if (typeof n === "number" && !(n > 0) && k !== "idle") {
    console.error(`--${k} must be a positive number`);
    process.exit(2);
  }
}

const PREFIX = "bench-streams-";
/** When "after close" is judged: this long after the server counted the last stream closed (15 s past the linger). */
const AFTER_CLOSE_S = 45;
const slugs = Array.from({ length: O.containers }, (_, i) => `${PREFIX}${i + 1}`);
/** The container id of each app, once deployed. */
const ids: string[] = [];
const sleepUs = Math.round(1_000_000 / O.rate);
/** A container that prints line-1, line-2, ... about `rate` times a second, and stops at once on SIGTERM. */
const COMPOSE = `services:
  chat:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; i=0; while true; do i=$$((i+1)); echo line-$$i; usleep ${sleepUs}; done"]
    stop_grace_period: 1s
`;

interface Scenario {
  name: string;
  /** Indexes into `slugs`. */
  containers: number[];
  perContainer: number;
}

const SCENARIOS: Scenario[] = [
  { name: `baseline: ${O.baseline} followers of 1 container`, containers: [0], perContainer: O.baseline },
  { name: `${O.followers.toLocaleString("en")} followers of 1 container`, containers: [0], perContainer: O.followers },
  {
    name: `${O.perContainer} followers each of ${O.containers} containers`,
    containers: slugs.map((_, i) => i),
    perContainer: O.perContainer,
  },
];

interface Result {
  sc: Scenario;
  round: number;
  streams: number;
  /** log_feeds / log_viewers / open from /api/system/info in the middle of the window. */
  mid: StreamsInfo;
  openMs: number;
  delivered: number;
  inWindow: number;
  windowS: number;
  /** Lines a container printed per second (from the followers' line numbers over the window). */
  lineRate: number;
  missing: number;
  duplicated: number;
  failed: number;
  other: number;
  failures: string[];
  refused: number;
  tooSlow: number;
  lag: { p50: number; p99: number; max: number };
  /** The same lag on the bench's own follow straight on the Engine API, one per container. */
  engineLag: { p50: number; p99: number; max: number };
  /** The longest the bench's event loop stalled in the window, ms. */
  clientStall: number;
  rss: { before: number; peak: number; afterClose: number; afterLinger: number | null; after45: number | null };
  anon: { before: number; peak: number; afterClose: number; afterLinger: number | null; after45: number | null };
  lingerS: number | null;
  /** CPU seconds per second of the window. */
  cpu: { idle: number; server: number; client: number; dockerd: number | null; machine: number };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : Number.NaN;
const log = (msg: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** Mean resident memory over `ms` (a few samples), MiB. */
async function settleRss(pid: number, ms: number): Promise<{ rss: number; anon: number }> {
  const rss: number[] = [];
  const anon: number[] = [];
  const end = Date.now() + ms;
  do {
    const m = rssOf(pid);
    rss.push(m.rss);
    anon.push(m.anon);
    await Bun.sleep(200);
  } while (Date.now() < end);
  return { rss: mean(rss), anon: mean(anon) };
}

/** Wait until the server counts no open stream and no viewer; then until no feed is left when `feeds` is set. */
async function quiet(s: Server, feeds: boolean, ms: number): Promise<boolean> {
  return waitFor(
    async () => {
      const i = await s.streams();
      return i.open === 0 && i.log_viewers === 0 && (!feeds || i.log_feeds === 0);
    },
    feeds ? "the log feeds to stop" : "the streams to close",
    ms,
  ).catch(() => false);
}

async function runScenario(s: Server, sc: Scenario, windowS: number, dockerd: number | null): Promise<Result> {
  const info0 = await s.streams();
  const before = await settleRss(s.pid, 2000);
  // the server's own CPU with the containers running and nothing watching
  const idle0 = cpuOf(s.pid);
  const idleT0 = performance.now();
  await Bun.sleep(3000);
  const idle = (cpuOf(s.pid) - idle0) / ((performance.now() - idleT0) / 1000);

  let peak = { ...before };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const m = rssOf(s.pid);
      peak = { rss: Math.max(peak.rss, m.rss), anon: Math.max(peak.anon, m.anon) };
      await Bun.sleep(200);
    }
  })();

  const headers = { authorization: `Bearer ${s.key}`, origin: s.url };
  const ws = s.url.replace(/^http/, "ws");
  const followers: Follower[] = [];
  for (const c of sc.containers) {
    for (let i = 0; i < sc.perContainer; i++) {
      followers.push(new Follower(c, `${ws}/api/apps/${slugs[c]}/logs?service=chat&tail=${O.tail}&follow=true`, headers));
    }
  }
  // open in batches, each waiting for its first frames: a thousand upgrades at once would measure the client's
  // connect burst more than the server; the order interleaves containers so every feed gets viewers early
  const order = sc.containers.length > 1 ? interleave(followers, sc.containers.length) : followers;
  const t0 = performance.now();
  for (let i = 0; i < order.length; i += O.batch) {
    const batch = order.slice(i, i + O.batch);
    for (const f of batch) f.open();
    await Promise.race([Promise.all(batch.map((f) => f.started)), Bun.sleep(30_000)]);
  }
  const openMs = performance.now() - t0;
  log(`  ${followers.length} streams open in ${(openMs / 1000).toFixed(1)} s`);
  await Bun.sleep(1000);

  // the window, with the reference follows straight on the engine and the client's own stall meter
  const direct = sc.containers.map((c) => new EngineFollower(ids[c]));
  await Promise.all(direct.map((d) => d.start()));
  await Bun.sleep(500);
  const stall = new StallMeter();
  stall.start();
  for (const d of direct) d.counting = true;
  const firstAt = new Map(
    sc.containers.map((c) => [c, Math.max(...followers.filter((f) => f.container === c).map((f) => f.last))]),
  );
  const cpu0 = cpuOf(s.pid);
  const client0 = process.cpuUsage();
  const dockerd0 = dockerd ? cpuOf(dockerd) : 0;
  const machine0 = machineCpu();
  const w0 = performance.now();
  for (const f of followers) f.counting = true;
  await Bun.sleep((windowS * 1000) / 2);
  const mid = await s.streams();
  await Bun.sleep((windowS * 1000) / 2);
  for (const f of followers) f.counting = false;
  for (const d of direct) d.counting = false;
  const clientStall = stall.stop();
  for (const d of direct) d.stop();
  const secs = (performance.now() - w0) / 1000;
  const serverCpu = (cpuOf(s.pid) - cpu0) / secs;
  const c1 = process.cpuUsage(client0);
  const clientCpu = (c1.user + c1.system) / 1e6 / secs;
  const dockerdCpu = dockerd ? (cpuOf(dockerd) - dockerd0) / secs : null;
  const machine = (machineCpu() - machine0) / secs;

  // every follower of a container must reach the newest line any of them has (M), with nothing skipped or repeated
  const end = new Map(sc.containers.map((c) => [c, Math.max(...followers.filter((f) => f.container === c).map((f) => f.last))]));
  const lineRate = mean(sc.containers.map((c) => ((end.get(c) ?? 0) - (firstAt.get(c) ?? 0)) / secs));
  await waitFor(
    async () => followers.every((f) => !f.ok || f.last >= (end.get(f.container) ?? 0)),
    "every follower to reach the end line",
    20_000,
  ).catch(() => {});

  sampling = false;
  await sampler;
  await Promise.race([Promise.all(followers.map((f) => f.close())), Bun.sleep(20_000)]);
  const closedOk = await quiet(s, false, 30_000);
  if (!closedOk) log("  the server still counts open streams 30 s after they closed");
  const closedAt = performance.now();
  await Bun.sleep(2000);
  const afterClose = await settleRss(s.pid, 1000);
  let afterLinger: { rss: number; anon: number } | null = null;
  let lingerS: number | null = null;
  if (O.linger) {
    if (await quiet(s, true, 90_000)) {
      lingerS = (performance.now() - closedAt) / 1000;
      await Bun.sleep(2000);
      afterLinger = await settleRss(s.pid, 1000);
    } else log("  the log feeds did not stop within 90 s of the streams closing");
  }
  // the bar: 45 s after the last stream closed (a mean over the second around it)
  let after45: { rss: number; anon: number } | null = null;
  if (O.linger) {
    await Bun.sleep(Math.max(0, closedAt + AFTER_CLOSE_S * 1000 - 500 - performance.now()));
    after45 = await settleRss(s.pid, 1000);
  }
  const info1 = await s.streams();

  /** One column (all of RSS or its anonymous part) at each point measured. */
  const memoryAt = (k: "rss" | "anon") => ({
    before: before[k],
    peak: peak[k],
    afterClose: afterClose[k],
    afterLinger: afterLinger?.[k] ?? null,
    after45: after45?.[k] ?? null,
  });
  const lags = followers.flatMap((f) => f.lags).sort((a, b) => a - b);
  const engineLags = direct.flatMap((d) => d.lags).sort((a, b) => a - b);
  const failures = followers.flatMap((f) => f.failures);
  return {
    sc,
    round: 1,
    streams: followers.length,
    mid,
    openMs,
    delivered: followers.reduce((a, f) => a + f.delivered, 0),
    inWindow: followers.reduce((a, f) => a + f.inWindow, 0),
    windowS: secs,
    lineRate,
    missing: followers.reduce((a, f) => a + f.skipped + (f.last < 0 ? 0 : Math.max(0, (end.get(f.container) ?? 0) - f.last)), 0),
    duplicated: followers.reduce((a, f) => a + f.duplicated, 0),
    failed: followers.filter((f) => !f.ok || f.last < 0).length,
    other: followers.reduce((a, f) => a + f.other, 0),
    failures: [...new Set(failures)].slice(0, 10),
    refused: info1.refused - info0.refused,
    tooSlow: info1.too_slow - info0.too_slow,
    lag: { p50: pct(lags, 50), p99: pct(lags, 99), max: lags.at(-1) ?? Number.NaN },
    engineLag: { p50: pct(engineLags, 50), p99: pct(engineLags, 99), max: engineLags.at(-1) ?? Number.NaN },
    clientStall,
    rss: memoryAt("rss"),
    anon: memoryAt("anon"),
    lingerS,
    cpu: { idle, server: serverCpu, client: clientCpu, dockerd: dockerdCpu, machine },
  };
}

/** Round-robin over the followers of `groups` equal consecutive groups. */
function interleave<T>(xs: T[], groups: number): T[] {
  const size = xs.length / groups;
  const out: T[] = [];
  for (let i = 0; i < size; i++) for (let g = 0; g < groups; g++) out.push(xs[g * size + i]);
  return out;
}

const mib = (x: number | null) => (x === null ? "-" : x.toFixed(1));
const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(1)}x` : "-");
const int = (n: number) => Math.round(n).toLocaleString("en");

function report(results: Result[], dockerd: boolean, idle: Array<{ s: number; rss: number; anon: number }>): void {
  /** Ratios are against the baseline of the same round. */
  const baseOf = (r: Result) => results.find((b) => b.round === r.round && b.sc === SCENARIOS[0]) ?? results[0];
  const name = (r: Result) => (O.rounds > 1 ? `${r.sc.name} (round ${r.round})` : r.sc.name);
  console.log(
    `\nLog streams: window ${O.window} s, containers printing ~${O.rate} lines/s, tail=${O.tail}, opened ${O.batch} at a time\n`,
  );
  console.log(
    "| scenario | streams | feeds / viewers | opened in | lines delivered | in window, lines/s | missing | duplicated | failed | lag p50 / p99 / max ms | engine direct lag p50 / p99 / max ms |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of results) {
    console.log(
      `| ${name(r)} | ${int(r.streams)} | ${r.mid.log_feeds} / ${int(r.mid.log_viewers)} | ${(r.openMs / 1000).toFixed(1)} s | ${int(r.delivered)} | ${int(r.inWindow / r.windowS)} | ${r.missing} | ${r.duplicated} | ${r.failed} | ${r.lag.p50} / ${r.lag.p99} / ${r.lag.max} | ${r.engineLag.p50} / ${r.engineLag.p99} / ${r.engineLag.max} |`,
    );
  }
  console.log(`\nServer RSS (MiB, VmRSS) and CPU (seconds per second of the window), ratios against the baseline\n`);
  console.log(
    `| scenario | RSS before | peak | peak - before | x baseline | after close | after linger | ${AFTER_CLOSE_S} s after close | ${AFTER_CLOSE_S} s after close - before | CPU idle | CPU | x baseline | µs CPU per line | bench client CPU |${dockerd ? " dockerd CPU |" : ""}`,
  );
  console.log(`|---|---|---|---|---|---|---|---|---|---|---|---|---|---|${dockerd ? "---|" : ""}`);
  for (const r of results) {
    const base = baseOf(r);
    const grow = r.rss.peak - r.rss.before;
    const back = r.rss.after45 === null ? null : r.rss.after45 - r.rss.before;
    console.log(
      `| ${name(r)} | ${mib(r.rss.before)} | ${mib(r.rss.peak)} | ${grow.toFixed(1)} | ${ratio(grow, base.rss.peak - base.rss.before)} | ${mib(r.rss.afterClose)} | ${mib(r.rss.afterLinger)} | ${mib(r.rss.after45)} | ${back === null ? "-" : `${back >= 0 ? "+" : ""}${back.toFixed(1)}`} | ${r.cpu.idle.toFixed(3)} | ${r.cpu.server.toFixed(3)} | ${ratio(r.cpu.server, base.cpu.server)} | ${((r.cpu.server * r.windowS * 1e6) / Math.max(1, r.inWindow)).toFixed(1)} | ${r.cpu.client.toFixed(3)} |${dockerd ? ` ${r.cpu.dockerd?.toFixed(3)} |` : ""}`,
    );
  }
  // the bar (issues 17 and 24): back within 5 MiB of where the scenario started, 45 s after its last stream closed
  const measured = results.filter((r) => r.rss.after45 !== null);
  const within = measured.filter((r) => (r.rss.after45 ?? 0) - r.rss.before <= 5);
  if (measured.length) {
    console.log(`\nRSS ${AFTER_CLOSE_S} s after close within 5 MiB of before: ${within.length} of ${measured.length} scenarios`);
  }
  console.log(`\nAnonymous memory (RssAnon, MiB): before / peak / after close / after linger / ${AFTER_CLOSE_S} s after close`);
  for (const r of results) {
    console.log(
      `  ${name(r).padEnd(40)} ${mib(r.anon.before)} / ${mib(r.anon.peak)} / ${mib(r.anon.afterClose)} / ${mib(r.anon.afterLinger)} / ${mib(r.anon.after45)}`,
    );
  }
  if (idle.length) {
    const start = results[0].rss.before;
    const last = idle[idle.length - 1];
    console.log("\nRSS / RssAnon (MiB) with nothing open, from 45 s after the last scenario closed:");
    console.log(`  ${idle.map((i) => `+${i.s} s: ${mib(i.rss)} / ${mib(i.anon)}`).join(", ")}`);
    console.log(
      `  RSS before the first scenario ${mib(start)}, at the end ${mib(last.rss)} (${last.rss >= start ? "+" : ""}${(last.rss - start).toFixed(1)} MiB), lowest ${mib(Math.min(...idle.map((i) => i.rss)))}`,
    );
  }
  console.log("\nDetails");
  for (const r of results) {
    console.log(
      `  ${name(r).padEnd(40)} lines/s per container ${r.lineRate.toFixed(1)}, machine CPU in the window ${r.cpu.machine.toFixed(2)} s/s of ${navigator.hardwareConcurrency}, bench event loop stalled ${r.clientStall.toFixed(0)} ms at most, feeds stopped ${r.lingerS === null ? "-" : `${r.lingerS.toFixed(1)} s`} after the streams closed, refused ${r.refused}, too slow ${r.tooSlow}, other frames ${r.other}`,
    );
    for (const f of r.failures) console.log(`    failure: ${f}`);
  }
}

async function main(): Promise<number> {
  for (const p of leftoverProjects(PREFIX)) {
    log(`removing ${p}, left over from an earlier run`);
    removeProject(p);
  }
  const maxStreams = Math.max(O.baseline, O.followers, O.perContainer * O.containers) + 100;
  const s = await startServer(O.binary, maxStreams);
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    log("removing the apps");
    const gone = await Promise.all(slugs.map((slug) => removeApp(s, slug)));
    // stop the server first: its reconciler would otherwise bring removed containers back
    await s.stop();
    for (const [i, slug] of slugs.entries()) if (!gone[i]) removeProject(`sundeck-${slug}`);
    if (O.keep) log(`kept ${s.dir}`);
    else rmSync(s.dir, { recursive: true, force: true });
  };
  process.on("SIGINT", () => {
    void cleanup().finally(() => process.exit(130));
  });
  try {
    log(`server pid ${s.pid} at ${s.url}; deploying ${slugs.length} chatty apps`);
    for (const slug of slugs) {
      await deployApp(s, slug, COMPOSE);
      const app = (await (await s.api(`/api/apps/${slug}`)).json()) as AppView;
      const id = app.services.find((x) => x.name === "chat")?.containers[0]?.id;
      if (!id) throw new Error(`no container of ${slug}`);
      ids.push(id);
    }
    const dockerd = dockerdPid();
    if (O.warmup) {
      log("warm-up: the baseline for 3 s, untimed");
      await runScenario(s, SCENARIOS[0], 3, dockerd);
    } else await quiet(s, false, 30_000);
    const results: Result[] = [];
    for (let round = 1; round <= O.rounds; round++) {
      for (const sc of SCENARIOS) {
        log(O.rounds > 1 ? `${sc.name} (round ${round})` : sc.name);
        const r = await runScenario(s, sc, O.window, dockerd);
        r.round = round;
        log(
          `  ${int(r.delivered)} lines delivered, missing ${r.missing}, duplicated ${r.duplicated}, failed ${r.failed}; RSS ${mib(r.rss.before)} -> ${mib(r.rss.peak)} -> ${mib(r.rss.afterClose)} -> ${mib(r.rss.afterLinger)} -> ${mib(r.rss.after45)} MiB; CPU ${r.cpu.server.toFixed(3)} s/s`,
        );
        results.push(r);
      }
    }
    // whether memory held 45 s after the last close comes back later, with nothing happening
    const idle: Array<{ s: number; rss: number; anon: number }> = [];
    for (let t = 10; t <= O.idle; t += 10) {
      await Bun.sleep(10_000);
      idle.push({ s: t, ...rssOf(s.pid) });
    }
    report(results, dockerd !== null, idle);
    if (s.warnings.length) {
      console.log(`\nThe server printed ${s.warnings.length} warning or error line(s), the first ones:`);
      for (const w of s.warnings.slice(0, 10)) console.log(`  ${w.slice(0, 300)}`);
    }
    const bad = results.filter((r) => r.missing || r.duplicated || r.failed || r.tooSlow || r.refused);
    console.log(
      bad.length
        ? `\nFAIL: lines missing or duplicated, or streams failed, in: ${bad.map((r) => (O.rounds > 1 ? `${r.sc.name} (round ${r.round})` : r.sc.name)).join("; ")}`
        : "\nPASS: every follower got every line once, no stream failed",
    );
    return bad.length ? 1 : 0;
  } finally {
    await cleanup();
  }
}

try {
  process.exit(await main());
} catch (e) {
  console.error(`benchmark could not run: ${(e as Error).stack ?? e}`);
  process.exit(2);
}
