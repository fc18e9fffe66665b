/**
 * Reverse-proxy benchmark: requests per second and p50/p99 latency straight to an upstream, through Sundeck's proxy
 * and through Caddy as a reverse proxy, on the same upstream in one run, loopback only.
 *
 *   bun scripts/bench/proxy.ts [--duration 10] [--threads 2] [--rounds 3] [--rate 1000] [--tls] [--reference]
 *   bun scripts/bench/proxy.ts --h2 [--duration 10] [--rounds 3]   (HTTP/2 against Caddy: proxy-h2.ts)
 *
 * Two loads per path and body: the most it takes (`wrk -t2 -c50`) and a moderate, paced load (about --rate req/s
 * over 10 connections, far below saturation). Runs are interleaved (the paths take turns in a rotated order) and
 * every figure is the median over the rounds. Targets (issue 4): Sundeck at or above Caddy's throughput (small
 * body) and a p99 overhead over direct under 1 ms at the moderate load. See scripts/bench/README.md.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { cpus, loadavg, release, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { table } from "./measure";
import { runH2 } from "./proxy-h2";
import {
  BODY_LABEL,
  type BodyKey,
  bodyTable,
  fmtMs,
  int,
  type Load,
  type LoadKey,
  med,
  p99Overhead,
  Results,
  type Sample,
  signedMs,
  TARGET_LABEL,
  type TargetKey,
  verdict,
} from "./proxy-report";
import {
  caddyConfig,
  cpuSeconds,
  freePorts,
  HOST,
  type Server,
  startCaddy,
  startReady,
  stopAll,
  stopServer,
  wrk,
  wrkScript,
} from "./proxy-run";
import { LARGE_SIZE, SMALL_BODY } from "./proxy-upstream";

/** p99 overhead target at the moderate load, ms. */
const OVERHEAD_TARGET_MS = 1;
/** Connections of the paced load. */
const PACED_CONNECTIONS = 10;
const LOAD_KEYS: LoadKey[] = ["max", "paced", "low"];
const BODY_KEYS: BodyKey[] = ["small", "large"];

interface Options {
  duration: number;
  threads: number;
  connections: number;
  rounds: number;
  rate: number;
  loads: LoadKey[];
  bodies: BodyKey[];
  lowConnections: number;
  warmup: number;
  tls: boolean;
  reference: boolean;
  phases: boolean;
  profile: boolean;
  keep: boolean;
  h2: boolean;
}

function options(): Options {
  const { values: v } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      duration: { type: "string", default: "10" },
      threads: { type: "string", default: "2" },
      connections: { type: "string", default: "50" },
      rounds: { type: "string", default: "3" },
      rate: { type: "string", default: "1000" },
      loads: { type: "string", default: "max,paced" },
      bodies: { type: "string", default: "small,large" },
      "low-connections": { type: "string", default: "4" },
      warmup: { type: "string", default: "2" },
      tls: { type: "boolean", default: false },
      reference: { type: "boolean", default: false },
      "no-phases": { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      h2: { type: "boolean", default: false },
    },
  });
  const list = <T extends string>(text: string, allowed: readonly T[], name: string): T[] => {
    const xs = text.split(",").map((x) => x.trim()) as T[];
    if (xs.length === 0 || xs.some((x) => !allowed.includes(x))) throw new Error(`--${name} must list ${allowed.join(", ")}`);
    return allowed.filter((a) => xs.includes(a));
  };
  const o: Options = {
    duration: Number(v.duration),
    threads: Number(v.threads),
    connections: Number(v.connections),
    rounds: Number(v.rounds),
    rate: Number(v.rate),
    loads: list(v.loads!, LOAD_KEYS, "loads"),
    bodies: list(v.bodies!, BODY_KEYS, "bodies"),
    lowConnections: Number(v["low-connections"]),
    warmup: Number(v.warmup),
    tls: v.tls!,
    reference: v.reference!,
    phases: !v["no-phases"],
    profile: v.profile!,
    keep: v.keep!,
    h2: v.h2!,
  };
  const whole = (n: number, lo: number, hi: number) => Number.isInteger(n) && n >= lo && n <= hi;
  if (!whole(o.duration, 1, 600)) throw new Error("--duration must be whole seconds from 1 to 600");
  if (!whole(o.threads, 1, 64)) throw new Error("--threads must be a whole number from 1 to 64");
  if (!whole(o.connections, o.threads, 10_000)) throw new Error("--connections must be a whole number, at least --threads");
  if (!whole(o.rounds, 1, 50)) throw new Error("--rounds must be a whole number from 1 to 50");
  if (!whole(o.rate, 10, 100_000)) throw new Error("--rate must be a whole number of req/s from 10 to 100000");
  if (!whole(o.lowConnections, 1, 1000)) throw new Error("--low-connections must be a whole number from 1 to 1000");
  if (!whole(o.warmup, 0, 60)) throw new Error("--warmup must be whole seconds from 0 to 60");
  return o;
}

const PATH: Record<BodyKey, string> = { small: "/small", large: "/large" };
const SIZE: Record<BodyKey, number> = { small: SMALL_BODY.length, large: LARGE_SIZE };

interface Target {
  key: TargetKey;
  base: string;
  server: Server;
}

interface LoadSpec extends Load {
  threads: number;
  connections: number;
  script: string;
}

const loadAvg = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(", ");

const isSundeck = (t: TargetKey) => t === "sundeck" || t === "sundeck-tls";

/** Check that every path serves both bodies whole and unencoded before anything is measured. */
async function verify(targets: Target[]): Promise<number> {
  let sundeckRequests = 0;
  for (const t of targets) {
    for (const body of BODY_KEYS) {
      const res = await fetch(`${t.base}${PATH[body]}`, {
        headers: { host: HOST },
        tls: { rejectUnauthorized: false },
        decompress: false,
      } as RequestInit);
      const bytes = (await res.arrayBuffer()).byteLength;
      if (isSundeck(t.key)) sundeckRequests++;
      const enc = res.headers.get("content-encoding");
      if (res.status !== 200 || bytes !== SIZE[body] || enc) {
        throw new Error(
          `${TARGET_LABEL[t.key]} ${PATH[body]}: status ${res.status}, ${bytes} bytes (want ${SIZE[body]})${enc ? `, content-encoding ${enc}` : ""}`,
        );
      }
    }
  }
  return sundeckRequests;
}

/** The handler phase timings (proxy-phases.ts) in their own process; null when they fail. */
async function phaseTable(bench: string): Promise<string | null> {
  const proc = Bun.spawn(["bun", join(bench, "proxy-phases.ts"), "--iterations", "100000"], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) {
    console.warn(`  warning: handler phase timing failed: ${err.trim().slice(-300)}`);
    return null;
  }
  return out.trimEnd();
}

async function main() {
  const o = options();
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "sundeck-proxybench-"));
  let cleaning: Promise<void> | null = null;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await stopAll();
      if (!o.keep) rmSync(dir, { recursive: true, force: true });
    })());
  const interrupted = (sig: string) => {
    console.log(`\n${sig}: stopping every process the benchmark started`);
    void cleanup().finally(() => process.exit(130));
  };
  process.on("SIGINT", () => interrupted("interrupted"));
  process.on("SIGTERM", () => interrupted("terminated"));

  try {
    if (o.h2) {
      process.exitCode = (await runH2(o, dir, import.meta.dir)) ? 0 : 1;
      return;
    }
    const caddyVersion = (await new Response(Bun.spawn(["caddy", "version"], { stdout: "pipe" }).stdout).text()).trim();
    const wrkVersion = (await new Response(Bun.spawn(["wrk", "-v"], { stdout: "pipe", stderr: "pipe" }).stdout).text())
      .split("\n")[0]
      .split(" Copyright")[0];
    const cpu = cpus();
    console.log(
      `${cpu.length} cores (${cpu[0]?.model.trim() ?? "?"}), linux ${release()}, bun ${Bun.version}, caddy ${caddyVersion}, ${wrkVersion}`,
    );
    console.log(`load average before: ${loadAvg()}`);

    const bench = import.meta.dir;
    const upstream = await startReady("upstream", ["bun", join(bench, "proxy-upstream.ts")]);
    const up = `127.0.0.1:${upstream.port}`;
    const prof = o.profile ? ["--cpu-prof-md", `--cpu-prof-dir=${join(dir, "profile")}`] : [];
    const sundeckCmd = (mode: string) => [
      "bun",
      ...prof,
      join(bench, "proxy-sundeck.ts"),
      "--upstream",
      up,
      "--host",
      HOST,
      "--dir",
      join(dir, `sundeck-${mode}`),
      "--tls",
      mode,
    ];
    const sundeck = await startReady("sundeck", sundeckCmd("off"));
    const sundeckTls = o.tls ? await startReady("sundeck-tls", sundeckCmd("local")) : null;
    const bare = o.reference ? await startReady("bun fetch", ["bun", join(bench, "proxy-bare.ts"), "--upstream", up]) : null;
    const [caddyPort, caddyTlsPort] = freePorts(2);
    const caddy = await startCaddy(
      dir,
      caddyConfig({ dir, port: caddyPort, tlsPort: o.tls ? caddyTlsPort : undefined, upstream: up }),
      caddyPort,
      async () => (await fetch(`http://127.0.0.1:${caddyPort}/small`, { headers: { host: HOST } })).status === 200,
    );

    const targets: Target[] = [
      { key: "direct", base: `http://${up}`, server: upstream },
      { key: "sundeck", base: `http://127.0.0.1:${sundeck.port}`, server: sundeck },
      { key: "caddy", base: `http://127.0.0.1:${caddyPort}`, server: caddy },
    ];
    if (bare) targets.push({ key: "bare", base: `http://127.0.0.1:${bare.port}`, server: bare });
    if (sundeckTls) {
      targets.push({ key: "sundeck-tls", base: `https://127.0.0.1:${sundeckTls.port}`, server: sundeckTls });
      targets.push({ key: "caddy-tls", base: `https://127.0.0.1:${caddyTlsPort}`, server: caddy });
    }
    let sundeckSent = await verify(targets);

    const pacedDelay = (PACED_CONNECTIONS * 1000) / o.rate;
    const loads: LoadSpec[] = o.loads.map((key): LoadSpec => {
      if (key === "max") {
        const label = `max (t${o.threads} c${o.connections})`;
        return { key, label, threads: o.threads, connections: o.connections, script: wrkScript(dir, key, 0) };
      }
      if (key === "paced") {
        const label = `~${o.rate}/s (t1 c${PACED_CONNECTIONS})`;
        return { key, label, threads: 1, connections: PACED_CONNECTIONS, script: wrkScript(dir, key, pacedDelay) };
      }
      const label = `closed (t1 c${o.lowConnections})`;
      return { key, label, threads: 1, connections: o.lowConnections, script: wrkScript(dir, key, 0) };
    });

    console.log(
      `upstream: Bun.serve static routes on ${up} (own process); sundeck: tls off${sundeckTls ? " and local" : ""}, ` +
        `request stats on; caddy: reverse_proxy, compression off, logs and admin off${o.tls ? ", tls internal" : ""}` +
        (bare ? "; reference: a bare Bun fetch proxy" : ""),
    );
    console.log(
      `every request sent with Host: ${HOST}; ${o.rounds} rounds of ${o.duration} s runs, paths in rotated order` +
        (o.loads.includes("paced")
          ? `; paced load: ${PACED_CONNECTIONS} connections, random pause of ${fmtMs(pacedDelay)} ms on average after each response`
          : ""),
    );

    if (o.warmup > 0) {
      console.log(`\nwarm-up (${o.warmup} s per path and body, not counted)`);
      for (const t of targets) {
        for (const body of o.bodies) {
          const w = await wrk({
            url: `${t.base}${PATH[body]}`,
            threads: o.threads,
            connections: o.connections,
            seconds: o.warmup,
            script: wrkScript(dir, "warmup", 0),
          });
          if (isSundeck(t.key)) sundeckSent += w.requests;
        }
      }
    }

    const results = new Results();
    const totalRuns = o.rounds * o.bodies.length * loads.length * targets.length;
    let run = 0;
    let group = 0;
    for (let round = 0; round < o.rounds; round++) {
      console.log(`\nround ${round + 1}/${o.rounds} (load average ${loadAvg()})`);
      for (const body of o.bodies) {
        for (const l of loads) {
          // the paths take turns in an order rotated for every group, so none always runs first or after another
          const order = targets.map((_, i) => targets[(i + group) % targets.length]);
          group++;
          const line: string[] = [];
          for (const t of order) {
            run++;
            const proxyPid = t.server.proc.pid;
            const upPid = upstream.proc.pid;
            const [p0, u0] = await Promise.all([cpuSeconds(proxyPid), cpuSeconds(upPid)]);
            const w = await wrk({
              url: `${t.base}${PATH[body]}`,
              threads: l.threads,
              connections: l.connections,
              seconds: o.duration,
              script: l.script,
            });
            const [p1, u1] = await Promise.all([cpuSeconds(proxyPid), cpuSeconds(upPid)]);
            if (isSundeck(t.key)) sundeckSent += w.requests;
            const sample: Sample = {
              ...w,
              round,
              proxyCpuUs: ((p1 - p0) / w.requests) * 1e6,
              upstreamCpuUs: ((u1 - u0) / w.requests) * 1e6,
            };
            results.add(t.key, body, l.key, sample);
            const bad = w.errors + w.badStatus;
            line.push(`${TARGET_LABEL[t.key]} ${int(w.rps)}/s p99 ${fmtMs(w.p99)}${bad ? ` (${bad} errors!)` : ""}`);
          }
          console.log(`  ${body.padEnd(5)} ${l.label.padEnd(20)} ${line.join(", ")}   [${run}/${totalRuns}]`);
        }
      }
    }
    console.log(`\nload average after: ${loadAvg()}`);

    // Sundeck's stats sink must have counted every request it answered
    const counted = { recorded: 0, stored: 0, seen: false };
    for (const s of [sundeck, sundeckTls]) {
      if (!s) continue;
      const line = (await stopServer(s)).find((l) => l.startsWith("STATS "));
      if (!line) continue;
      const c = JSON.parse(line.slice(6)) as { recorded: number; stored: number };
      counted.recorded += c.recorded;
      counted.stored += c.stored;
      counted.seen = true;
    }
    await stopAll();
    const phases = o.phases ? await phaseTable(bench) : null;

    const tables: Array<{ title: string; targets: TargetKey[] }> = [
      {
        title: "HTTP (sundeck tls off)",
        targets: bare ? ["direct", "sundeck", "caddy", "bare"] : ["direct", "sundeck", "caddy"],
      },
    ];
    if (o.tls)
      tables.push({
        title: "TLS at the proxy (sundeck tls local; plain HTTP to the upstream)",
        targets: ["direct", "sundeck-tls", "caddy-tls"],
      });
    for (const tb of tables) {
      for (const body of o.bodies) {
        console.log(`\n${tb.title}, ${BODY_LABEL[body]}; medians of ${o.rounds} rounds`);
        console.log(bodyTable(results, tb.targets, body, loads));
      }
    }
    console.log(
      "\np99 - direct: median over the rounds of p99(path) - p99(direct) in the same round. CPU: user+system time of the\n" +
        "proxy process (all threads) and of the upstream per request; for direct, the upstream's. errors: socket errors,\n" +
        "timeouts and responses >= 400 over all rounds.",
    );
    if (counted.seen) {
      console.log(
        `sundeck request stats: ${int(counted.recorded)} requests recorded (${int(counted.stored)} in the raw tier after the last flush) ` +
          `for ${int(sundeckSent)} completed by wrk and the checks (requests cut off at the end of a run are recorded too)`,
      );
    }
    if (phases) {
      console.log("\nsundeck's own work per request, without the network (proxy-phases.ts, ns per call, one core):");
      console.log(phases);
    }

    console.log("\nverdicts (issue 4)");
    let ok = true;
    const rps = (t: TargetKey, b: BodyKey) => med(results.get(t, b, "max").map((s) => s.rps));
    if (o.loads.includes("max") && o.bodies.includes("small")) {
      const [s, c] = [rps("sundeck", "small"), rps("caddy", "small")];
      const text = `throughput, small body: sundeck ${int(s)} req/s ${s >= c ? ">=" : "<"} caddy ${int(c)} req/s (${((s / c - 1) * 100).toFixed(0)}%)`;
      ok = verdict(s >= c, text) && ok;
    } else console.log("  ----  throughput, small body: not measured (needs --loads max and --bodies small)");
    if (o.loads.includes("paced")) {
      for (const body of o.bodies) {
        const over = p99Overhead(results, "sundeck", body, "paced");
        const others = [`caddy ${signedMs(p99Overhead(results, "caddy", body, "paced"))} ms`];
        if (bare) others.push(`bun fetch ${signedMs(p99Overhead(results, "bare", body, "paced"))} ms`);
        const text = `p99 overhead at ~${o.rate} req/s, ${BODY_LABEL[body]}: sundeck ${signedMs(over)} ms (target < ${OVERHEAD_TARGET_MS} ms; ${others.join(", ")})`;
        ok = verdict(over < OVERHEAD_TARGET_MS, text) && ok;
      }
    } else console.log("  ----  p99 overhead at moderate load: not measured (needs --loads paced)");
    const bad = results.all().reduce((n, s) => n + s.errors + s.badStatus, 0);
    if (bad > 0) ok = verdict(false, `${bad} failed requests over all runs: the figures above are not valid`) && ok;
    if (counted.seen && counted.recorded < sundeckSent) {
      ok = verdict(false, `request stats recorded ${counted.recorded} of ${sundeckSent} requests`) && ok;
    }
    if (o.loads.includes("max")) {
      const info: string[][] = [];
      for (const body of o.bodies) {
        const [s, c] = [rps("sundeck", body), rps("caddy", body)];
        info.push([`HTTP, ${BODY_LABEL[body]}`, int(s), int(c), `${((s / c - 1) * 100).toFixed(0)}%`]);
        if (o.tls) {
          const [st, ct] = [rps("sundeck-tls", body), rps("caddy-tls", body)];
          info.push([`TLS, ${BODY_LABEL[body]}`, int(st), int(ct), `${((st / ct - 1) * 100).toFixed(0)}%`]);
        }
      }
      console.log("\nthroughput at max load, sundeck against caddy (only the small-body HTTP row has a target):");
      console.log(table(["", "sundeck req/s", "caddy req/s", "difference"], info, new Set([1, 2, 3])));
    }
    if (o.profile) {
      const pdir = join(dir, "profile");
      const files = readdirSync(pdir).map((f) => join(pdir, f));
      console.log(`\nsundeck cpu profile${files.length > 1 ? "s" : ""} (markdown): ${files.join(", ")}`);
      o.keep = true;
    }
    console.log(`\ntotal time ${((performance.now() - started) / 1000).toFixed(0)} s`);
    process.exitCode = ok ? 0 : 1;
  } finally {
    await cleanup();
    if (o.keep) console.log(`kept ${dir}`);
  }
}

main().catch((e) => {
  console.error(`proxy benchmark failed: ${(e as Error).message}`);
  void stopAll().finally(() => process.exit(2));
});
