/**
 * Rolling deploys under load (issue 28, item 6): the compiled server in its own process, a routed app of
 * `sundeck-test/web` redeployed `--deploys` times (an environment value changed each time) while `--clients`
 * keep-alive HTTP/1.1 clients send requests through the proxy with the app's Host, per scenario:
 *   - recreate-1, recreate-2: `sundeck.deploy.strategy: recreate` (compose recreates), 1 and 2 replicas: the baseline;
 *   - rolling-1, rolling-2: the default strategy (rolling), 1 and 2 replicas;
 *   - rolling-ws: rolling, 1 replica, plus a second service `ws` (a WebSocket echo server, busybox `nc -ll -e` running
 *     a shell handshake and framer) with one WebSocket client connected all along, pinging every 200 ms, and a loop
 *     of long HTTP requests (a CGI that sleeps `--slow` seconds) so that one is always in flight at the switch.
 * Measured: requests sent and failed (non-2xx or connection error), the longest gap without a success, latency p50 /
 * p99 overall, during deploys (POST to the done frame) and outside them, deploy time (202 to the done frame) median
 * and max; for rolling-ws the long requests in flight at the switch (they must finish), echoes the old tunnel still
 * answered after the switch, and how each tunnel ended (close code, clean or not, after the switch).
 *
 *   bun run build && bun scripts/bench/rollout.ts [--deploys 10] [--clients 8] [--scenarios recreate-1,rolling-1,...]
 *
 * Exit status 1 when a rolling scenario failed a request or a deploy, 2 when the benchmark could not run.
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { DeployRecord } from "../../src/shared/deploys";
import { deploy, type Seen, type Sundeck } from "./deploy-sundeck";
import { removeProject } from "./docker-cleanup";
import { fmtMs, spread, summarize, table } from "./measure";
import { leftoverProjects, type Server, startServer, waitFor } from "./streams-server";

const { values: v } = parseArgs({
  options: {
    deploys: { type: "string", default: "10" },
    clients: { type: "string", default: "8" },
    scenarios: { type: "string", default: "recreate-1,rolling-1,recreate-2,rolling-2,rolling-ws" },
    pause: { type: "string", default: "1" },
    slow: { type: "string", default: "3" },
    "ws-drain": { type: "string", default: "5s" },
    binary: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
const DEPLOYS = Number(v.deploys);
const CLIENTS = Number(v.clients);
const PAUSE_MS = Number(v.pause) * 1000;
const SLOW_S = Number(v.slow);
const BINARY = resolve(v.binary ?? "dist/sundeck");
const PREFIX = "rollout-";

interface Scenario {
  name: string;
  strategy: "rolling" | "recreate";
  replicas: number;
  ws: boolean;
}
const SCENARIOS: Record<string, Scenario> = {
  "recreate-1": { name: "recreate-1", strategy: "recreate", replicas: 1, ws: false },
  "rolling-1": { name: "rolling-1", strategy: "rolling", replicas: 1, ws: false },
  "recreate-2": { name: "recreate-2", strategy: "recreate", replicas: 2, ws: false },
  "rolling-2": { name: "rolling-2", strategy: "rolling", replicas: 2, ws: false },
  "rolling-ws": { name: "rolling-ws", strategy: "rolling", replicas: 1, ws: true },
};

// Run in every container before the image's entry: a CGI that answers its hostname after SLOW_S seconds, and a
// WebSocket echo server on 8081 (one shell per connection: the handshake, then each masked text frame under 126
// bytes answered as "<hostname> <payload>"; a close frame is answered and ends it). No close frame on SIGTERM: what
// the client sees at the end of a drain is what the proxy does.
const WS_SH = String.raw`#!/bin/sh
key=
while IFS= read -r l; do
  l=$(printf '%s' "$l" | tr -d '\r')
  [ -z "$l" ] && break
  case "$l" in [Ss]ec-[Ww]eb[Ss]ocket-[Kk]ey:*) key=$(printf '%s' "$l" | cut -d: -f2 | tr -d ' ');; esac
done
[ -n "$key" ] || exit 0
acc=$(printf '%s' "$key""258EAFA5-E914-47DA-95CA-C5AB0DC85B11" | sha1sum | cut -d' ' -f1 | xxd -r -p | base64)
printf 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n' "$acc"
h=$(hostname)
while :; do
  set -- $(dd bs=1 count=6 2>/dev/null | od -An -tu1)
  [ $# -eq 6 ] || exit 0
  op=$(( $1 & 15 )); n=$(( $2 & 127 ))
  [ "$op" -eq 8 ] && { printf '\210\000'; exit 0; }
  m1=$3 m2=$4 m3=$5 m4=$6
  out=
  i=0
  for b in $(dd bs=1 count=$n 2>/dev/null | od -An -tu1 -v); do
    case $(( i % 4 )) in 0) k=$m1;; 1) k=$m2;; 2) k=$m3;; 3) k=$m4;; esac
    out="$out\\$(printf '%03o' $(( b ^ k )))"
    i=$(( i + 1 ))
  done
  msg="$h $(printf "$out")"
  printf "\\201\\$(printf '%03o' "$(printf '%s' "$msg" | wc -c)")%s" "$msg"
done
`;
const SETUP = `mkdir -p /www/cgi-bin
printf '#!/bin/sh\\nsleep ${SLOW_S}\\nprintf "Content-Type: text/plain\\\\r\\\\n\\\\r\\\\n"\\nhostname\\n' > /www/cgi-bin/slow
chmod +x /www/cgi-bin/slow
echo ${Buffer.from(WS_SH).toString("base64")} | base64 -d > /tmp/ws.sh
chmod +x /tmp/ws.sh
nc -ll -p 8081 -e /tmp/ws.sh &
`;
const SETUP_B64 = Buffer.from(SETUP).toString("base64");

const slugOf = (sc: Scenario) => `${PREFIX}${sc.name}`;
const hostOf = (sc: Scenario) => `${sc.name}.rollout.bench.test`;
const wsHostOf = (sc: Scenario) => `ws.${hostOf(sc)}`;

function service(name: string, sc: Scenario, rev: number, labels: string): string {
  return `  ${name}:
    image: sundeck-test/web:latest
    command: ["sh", "-c", "echo ${SETUP_B64} | base64 -d > /tmp/setup.sh && . /tmp/setup.sh && exec /entry.sh"]
    stop_grace_period: 2s
    environment:
      REV: "${rev}"
${sc.replicas > 1 ? `    deploy:\n      replicas: ${sc.replicas}\n` : ""}    labels:
${labels}${sc.strategy === "recreate" ? "      sundeck.deploy.strategy: recreate\n" : ""}`;
}

const compose = (sc: Scenario, rev: number) =>
  `services:\n${service("web", sc, rev, `      sundeck.domain: ${hostOf(sc)}\n      sundeck.port: "8080"\n      sundeck.deploy.drain_timeout: 30s\n`)}${
    sc.ws
      ? service(
          "ws",
          sc,
          rev,
          `      sundeck.domain: ${wsHostOf(sc)}\n      sundeck.port: "8081"\n      sundeck.deploy.drain_timeout: ${v["ws-drain"]}\n`,
        )
      : ""
  }`;

/** One HTTP exchange: start and end (performance.now), status (0: no answer), the body (the replica's hostname). */
interface Exchange {
  t0: number;
  t1: number;
  status: number;
  body: string;
}

/** `n` loops sending GET `path` with `host` until stopped; every exchange kept. */
function loadLoop(proxy: number, host: string, path: string, n: number, timeoutMs: number, method = "GET") {
  let stop = false;
  const log: Exchange[] = [];
  const loops = Array.from({ length: n }, async () => {
    while (!stop) {
      const t0 = performance.now();
      try {
        const r = await fetch(`http://127.0.0.1:${proxy}${path}`, {
          method,
          headers: { host },
          body: method === "POST" ? "x" : undefined,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const body = (await r.text()).trim();
        log.push({ t0, t1: performance.now(), status: r.status, body: body.slice(0, 120) });
      } catch (e) {
        log.push({ t0, t1: performance.now(), status: 0, body: (e as Error).message.slice(0, 120) });
        await Bun.sleep(1);
      }
    }
  });
  return {
    log,
    async end() {
      stop = true;
      await Promise.all(loops);
      return log;
    },
  };
}

/** How one WebSocket connection went. */
interface Tunnel {
  opened: number;
  closed: number;
  code: number;
  clean: boolean;
  /** Echo arrivals: when, and which replica answered. */
  echoes: Array<{ at: number; host: string }>;
  /** Pings without an echo when it closed. */
  lost: number;
}

/** One WebSocket client, reconnecting after each close, pinging every 200 ms. */
function wsClient(proxy: number, host: string) {
  let stop = false;
  const tunnels: Tunnel[] = [];
  let current: WebSocket | null = null;
  const once = () =>
    new Promise<void>((res) => {
      const t: Tunnel = { opened: Number.NaN, closed: Number.NaN, code: 0, clean: false, echoes: [], lost: 0 };
      let pending = 0;
      let timer: ReturnType<typeof setInterval> | null = null;
      const ws = new WebSocket(`ws://127.0.0.1:${proxy}/`, { headers: { host } } as any);
      current = ws;
      ws.onopen = () => {
        t.opened = performance.now();
        let k = 0;
        timer = setInterval(() => {
          if (ws.readyState !== WebSocket.OPEN) return;
          ws.send(`ping ${++k}`);
          pending++;
        }, 200);
      };
      ws.onmessage = (e) => {
        pending = Math.max(0, pending - 1);
        t.echoes.push({ at: performance.now(), host: String(e.data).split(" ")[0] });
      };
      ws.onclose = (e) => {
        if (timer) clearInterval(timer);
        t.closed = performance.now();
        t.code = e.code;
        t.clean = e.wasClean;
        t.lost = pending;
        tunnels.push(t);
        res();
      };
    });
  const loop = (async () => {
    while (!stop) {
      await once();
      if (!stop) await Bun.sleep(50);
    }
  })();
  return {
    tunnels,
    async end() {
      stop = true;
      (current as WebSocket | null)?.close(1000);
      await loop;
      return tunnels;
    },
  };
}

/** One timed redeploy. */
interface Run {
  t0: number;
  /** performance.now of the done frame. */
  end: number;
  /** 202 to the done frame, ms. */
  ms: number;
  /** performance.now of each service's "switched traffic" line (rolling only). */
  switched: Record<string, number>;
  strategies: DeployRecord["strategies"];
  /** Sundeck's own lines about each service ("web: switched traffic to ..."), with ms since the POST. */
  lines: string[];
  error: string | null;
}

const SWITCHED = /^(\S+): switched traffic to /;

async function redeploy(s: Server, sc: Scenario, rev: number): Promise<Run> {
  const t0 = performance.now();
  try {
    // deploy-sundeck's deploy reads only the url and the key of the server it is given
    const r = await deploy(s as unknown as Sundeck, slugOf(sc), compose(sc, rev), 300_000);
    const switched: Record<string, number> = {};
    const lines: string[] = [];
    for (const f of r.frames as Seen[]) {
      const m = SWITCHED.exec(f.output);
      if (m) switched[m[1]] = f.at;
      if (/^(web|ws): /.test(f.output)) lines.push(`+${Math.round(f.at - r.t0)} ms ${f.output}`);
    }
    const list = (await (await s.api(`/api/apps/${slugOf(sc)}/deploys`)).json()) as DeployRecord[];
    return {
      t0: r.t0,
      end: r.t0 + r.done,
      ms: r.done - r.accepted,
      switched,
      strategies: list[0]?.strategies ?? null,
      lines,
      error: null,
    };
  } catch (e) {
    return {
      t0,
      end: performance.now(),
      ms: performance.now() - t0,
      switched: {},
      strategies: null,
      lines: [],
      error: (e as Error).message,
    };
  }
}

interface Result {
  scenario: string;
  deploys: number;
  deployErrors: string[];
  strategy: string;
  sent: number;
  failed: number;
  failures: Record<string, number>;
  gapMs: number;
  p50: number;
  p99: number;
  p99During: number;
  p99Outside: number;
  p50During: number;
  p50Outside: number;
  deployMedian: number;
  deployMax: number;
  /** The long requests, by method (GET may be retried by the proxy on another replica, POST never). */
  slow?: Record<string, LongRequests>;
  ws?: {
    tunnels: number;
    atSwitch: number;
    echoesAfterSwitch: number;
    lost: number;
    closes: Record<string, number>;
    closeAfterSwitchMs: number[];
    reconnectMs: number[];
  };
}

/** The longest stretch between successes within [from, to]. */
function longestGap(log: Exchange[], from: number, to: number): number {
  const ok = log
    .filter((x) => x.status >= 200 && x.status < 300)
    .map((x) => x.t1)
    .sort((a, b) => a - b);
  let gap = 0;
  let last = from;
  for (const t of ok) {
    gap = Math.max(gap, t - last);
    last = t;
  }
  return Math.max(gap, to - last);
}

/** Long requests of one method, and those in flight when the web service switched (started before, ended after). */
interface LongRequests {
  sent: number;
  failed: number;
  atSwitch: number;
  atSwitchOk: number;
  /** Of those: answered by the replica they started on (drained), or by a new one (cut, then retried). */
  byOld: number;
  byNew: number;
  /** Their durations, ms. */
  atSwitchMs: number[];
  failures: string[];
}

function longRequests(runs: Run[], load: Exchange[], slowLog: Exchange[]): LongRequests {
  const spans: Array<Exchange & { old: boolean }> = [];
  for (const r of runs) {
    const sw = r.switched.web;
    if (sw === undefined) continue;
    // the replicas serving before this deploy: who answered the load in the second before it started
    const old = new Set(load.filter((x) => x.status === 200 && x.t1 > r.t0 - 1000 && x.t1 < r.t0).map((x) => x.body));
    for (const x of slowLog) if (x.t0 < sw && x.t1 > sw) spans.push({ ...x, old: old.has(x.body) });
  }
  const bad = slowLog.filter((x) => x.status !== 200);
  return {
    sent: slowLog.length,
    failed: bad.length,
    atSwitch: spans.length,
    atSwitchOk: spans.filter((x) => x.status === 200).length,
    byOld: spans.filter((x) => x.status === 200 && x.old).length,
    byNew: spans.filter((x) => x.status === 200 && !x.old).length,
    atSwitchMs: spans.map((x) => Math.round(x.t1 - x.t0)),
    failures: bad.slice(0, 5).map((x) => `${x.status} ${x.body.slice(0, 60)} after ${fmtMs(x.t1 - x.t0)} ms`),
  };
}

async function runScenario(s: Server, proxy: number, sc: Scenario): Promise<Result> {
  const slug = slugOf(sc);
  const first = await redeploy(s, sc, 0);
  if (first.error) throw new Error(`first deploy of ${slug}: ${first.error}`);
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${proxy}/`, { headers: { host: hostOf(sc) } })).status === 200,
    `${slug} to answer`,
    60_000,
  );
  const load = loadLoop(proxy, hostOf(sc), "/", CLIENTS, 5000);
  const slowGet = sc.ws ? loadLoop(proxy, hostOf(sc), "/cgi-bin/slow", 1, 60_000, "GET") : null;
  const slowPost = sc.ws ? loadLoop(proxy, hostOf(sc), "/cgi-bin/slow", 1, 60_000, "POST") : null;
  const ws = sc.ws ? wsClient(proxy, wsHostOf(sc)) : null;
  const from = performance.now();
  const runs: Run[] = [];
  await Bun.sleep(PAUSE_MS);
  for (let k = 1; k <= DEPLOYS; k++) {
    const r = await redeploy(s, sc, k);
    runs.push(r);
    const strat = r.strategies ? Object.values(r.strategies).map((x) => x.strategy) : [];
    console.log(
      `  ${sc.name} #${k}: ${r.error ? `FAILED ${r.error.split("\n")[0]}` : `${fmtMs(r.ms)} ms`} [${strat.join(",")}] ${
        Object.keys(r.switched).length
          ? `switched ${Object.entries(r.switched).map(([n, at]) => `${n} +${fmtMs(at - r.t0)}`)}`
          : ""
      }`,
    );
    if (r.error) console.log(r.error.split("\n").slice(1).join("\n"));
    if (k === 1) for (const l of r.lines) console.log(`    ${l}`);
    await Bun.sleep(PAUSE_MS);
  }
  const to = performance.now();
  const log = await load.end();
  const slowGetLog = (await slowGet?.end()) ?? [];
  const slowPostLog = (await slowPost?.end()) ?? [];
  const tunnels = (await ws?.end()) ?? [];

  const during = (t: number) => runs.some((r) => t >= r.t0 && t <= r.end);
  const okLat = (xs: Exchange[]) => xs.filter((x) => x.status >= 200 && x.status < 300).map((x) => x.t1 - x.t0);
  const bad = log.filter((x) => x.status < 200 || x.status >= 300);
  const failures: Record<string, number> = {};
  for (const x of bad) {
    const key = x.status ? `${x.status} ${x.body.slice(0, 40)}` : x.body.slice(0, 60);
    failures[key] = (failures[key] ?? 0) + 1;
  }
  const all = summarize(okLat(log));
  const inside = summarize(okLat(log.filter((x) => during(x.t0))));
  const outside = summarize(okLat(log.filter((x) => !during(x.t0))));
  const times = spread(runs.filter((r) => !r.error).map((r) => r.ms));
  const strategies = new Set(runs.flatMap((r) => (r.strategies ? Object.values(r.strategies).map((x) => x.strategy) : [])));
  const res: Result = {
    scenario: sc.name,
    deploys: runs.length,
    deployErrors: runs.filter((r) => r.error).map((r) => r.error!.split("\n")[0]),
    strategy: [...strategies].join(","),
    sent: log.length,
    failed: bad.length,
    failures,
    gapMs: longestGap(log, from, to),
    p50: all.p50,
    p99: all.p99,
    p50During: inside.p50,
    p99During: inside.p99,
    p50Outside: outside.p50,
    p99Outside: outside.p99,
    deployMedian: times.median,
    deployMax: times.max,
  };
  if (slowGet && slowPost) res.slow = { GET: longRequests(runs, log, slowGetLog), POST: longRequests(runs, log, slowPostLog) };
  if (ws) {
    const closes: Record<string, number> = {};
    const closeAfter: number[] = [];
    const reconnect: number[] = [];
    let atSwitch = 0;
    let echoesAfter = 0;
    for (const [i, t] of tunnels.entries()) {
      const sw = runs.find((r) => r.switched.ws !== undefined && t.opened < r.switched.ws && t.closed > r.switched.ws)?.switched
        .ws;
      const key = `${t.code}${t.clean ? " clean" : " not clean"}`;
      closes[key] = (closes[key] ?? 0) + 1;
      if (sw === undefined) continue;
      atSwitch++;
      echoesAfter += t.echoes.filter((e) => e.at > sw).length;
      closeAfter.push(t.closed - sw);
      const next = tunnels[i + 1];
      if (next?.echoes[0]) reconnect.push(next.echoes[0].at - t.closed);
    }
    res.ws = {
      tunnels: tunnels.length,
      atSwitch,
      echoesAfterSwitch: echoesAfter,
      lost: tunnels.reduce((a, t) => a + t.lost, 0),
      closes,
      closeAfterSwitchMs: closeAfter.map(Math.round),
      reconnectMs: reconnect.map(Math.round),
    };
  }
  return res;
}

async function main() {
  const names = v.scenarios!.split(",");
  for (const n of names) if (!SCENARIOS[n]) throw new Error(`unknown scenario ${n} (${Object.keys(SCENARIOS).join(", ")})`);
  for (const p of leftoverProjects(PREFIX)) removeProject(p);
  const s = await startServer(BINARY, 100);
  const info = (await (await s.api("/api/system/info")).json()) as { proxy_port: number | null };
  if (!info.proxy_port) throw new Error("the server reports no proxy port");
  const results: Result[] = [];
  let failed = false;
  try {
    for (const n of names) {
      const sc = SCENARIOS[n];
      console.log(
        `${n}: ${sc.strategy}, ${sc.replicas} ${sc.replicas === 1 ? "replica" : "replicas"}${sc.ws ? ", WebSocket + long requests" : ""}`,
      );
      const r = await runScenario(s, info.proxy_port, sc);
      results.push(r);
      console.log(JSON.stringify(r));
      await s.api(`/api/apps/${slugOf(sc)}?volumes=true`, { method: "DELETE" }).then((x) => x.arrayBuffer());
      await waitFor(async () => (await s.api(`/api/apps/${slugOf(sc)}`)).status === 404, `${slugOf(sc)} to go`, 60_000).catch(
        () => {},
      );
      if (
        sc.strategy === "rolling" &&
        (r.failed > 0 || r.deployErrors.length > 0 || Object.values(r.slow ?? {}).some((x) => x.failed > 0 || x.byNew > 0))
      )
        failed = true;
    }
  } catch (e) {
    failed = true;
    console.error(`rollout: ${(e as Error).message}`);
    for (const w of s.warnings.slice(-10)) console.error(`  server: ${w}`);
  } finally {
    await s.stop();
    const compose = Bun.spawnSync(["docker", "compose", "version", "--short"]).stdout.toString().trim();
    console.log(`\ncompose: ${compose || "v1 (docker-compose)"}, ${DEPLOYS} redeploys per scenario, ${CLIENTS} clients`);
    const rows = results.map((r) => [
      r.scenario,
      r.strategy,
      String(r.sent),
      String(r.failed),
      fmtMs(r.gapMs),
      `${fmtMs(r.p50)} / ${fmtMs(r.p99)}`,
      `${fmtMs(r.p50During)} / ${fmtMs(r.p99During)}`,
      `${fmtMs(r.p50Outside)} / ${fmtMs(r.p99Outside)}`,
      `${fmtMs(r.deployMedian)} / ${fmtMs(r.deployMax)}`,
      String(r.deployErrors.length),
    ]);
    const head = [
      "scenario",
      "strategy",
      "sent",
      "failed",
      "longest gap",
      "p50/p99 all",
      "p50/p99 during",
      "p50/p99 outside",
      "deploy median/max",
      "deploy errors",
    ];
    console.log(table(head, rows, new Set([2, 3, 4, 5, 6, 7, 8, 9])));
    for (const r of results) {
      if (r.failed) console.log(`${r.scenario} failures: ${JSON.stringify(r.failures)}`);
      if (r.slow) console.log(`${r.scenario} long requests: ${JSON.stringify(r.slow)}`);
      if (r.ws) console.log(`${r.scenario} WebSocket: ${JSON.stringify(r.ws)}`);
    }
    const by = Object.fromEntries(results.map((r) => [r.scenario, r]));
    for (const n of ["1", "2"]) {
      const [roll, rec] = [by[`rolling-${n}`], by[`recreate-${n}`]];
      if (roll && rec)
        console.log(
          `${n} ${n === "1" ? "replica" : "replicas"}: failed ${roll.failed} vs ${rec.failed}; deploy median ${fmtMs(roll.deployMedian)} vs ${fmtMs(rec.deployMedian)} ms (${fmtMs(roll.deployMedian - rec.deployMedian)} ms, x${(roll.deployMedian / rec.deployMedian).toFixed(2)})`,
        );
    }
    console.log(JSON.stringify({ bench: "rollout", compose: compose || "v1", deploys: DEPLOYS, clients: CLIENTS, results }));
    for (const p of leftoverProjects(PREFIX)) removeProject(p);
    if (!v.keep) rmSync(s.dir, { recursive: true, force: true });
    else console.log(`kept ${s.dir}`);
  }
  process.exit(failed ? 1 : 0);
}

if (import.meta.main)
  main().catch((e) => {
    console.error(`rollout: ${(e as Error).message}`);
    process.exit(2);
  });
