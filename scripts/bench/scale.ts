/**
 * How Sundeck's cost grows with the number of apps (issue 26): the compiled server in its own process on a stock
 * engine, routed busybox web apps deployed through the API up to each count (default 20, 50, 100, 200), and at
 * each count
 *   - the deploys of that step (wall time per app, `concurrency` at once),
 *   - resident memory after a settle and again after the idle window (read from /proc, the server never asked to
 *     collect),
 *   - GET /api/apps and GET /api/apps/{slug} through the API, p50 and p99 of `samples` sequential calls,
 *   - a redeploy of one app (POST to succeeded) and a new app (POST to its route answering through the proxy),
 *   - the route table rebuilt with that many apps (in this process, as the server does on each status change),
 *   - the server's CPU while idle, per 10 s metrics tick (collection, status polls and the rest),
 *   - the metric rows written over that idle window, per hour (extrapolated), and the database's size after it,
 *   - a restart: SIGTERM, then a new process over the same data: spawn to /api/health 200, and to every route
 *     answering 200 through the proxy.
 *
 *   bun run build && bun scripts/bench/scale.ts [--counts 20,50,100,200] [--idle 60] [--settle 20] [--keep]
 *
 * Exit status 1 when a deploy failed or a route did not answer, 2 when the benchmark could not run.
 */
import { Database } from "bun:sqlite";
import { readdirSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { prepare } from "../../src/compose/prepare";
import { defaults } from "../../src/config/schema";
import { routeDefaults } from "../../src/edge";
import { buildRouteTable } from "../../src/proxy/route-table";
import { removeProject } from "./docker-cleanup";
import { cpuOf, leftoverProjects, rssOf, type Server, startServer, waitFor } from "./streams-server";

const { values: v } = parseArgs({
  options: {
    counts: { type: "string", default: "20,50,100,200" },
    concurrency: { type: "string", default: "4" },
    samples: { type: "string", default: "200" },
    settle: { type: "string", default: "20" },
    idle: { type: "string", default: "60" },
    binary: { type: "string" },
    keep: { type: "boolean", default: false },
    memory: { type: "boolean", default: false },
  },
});
const COUNTS = v.counts!.split(",").map(Number);
const CONC = Number(v.concurrency);
const SAMPLES = Number(v.samples);
const SETTLE = Number(v.settle);
const IDLE = Number(v.idle);
const BINARY = resolve(v.binary ?? "dist/sundeck");
const PREFIX = "scale-";

const slug = (i: number) => `${PREFIX}${i}`;
const host = (i: number) => `${slug(i)}.bench.test`;
const compose = (i: number, rev = 0) => `services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    environment:
      REV: "${rev}"
    labels:
      sundeck.domain: ${host(i)}
      sundeck.port: "8080"
`;

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => res(p));
    });
    srv.on("error", rej);
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

async function deploy(s: Server, i: number, rev = 0): Promise<number> {
  const t = performance.now();
  const r = await s.api("/api/apps/deploy", {
    method: "POST",
    body: JSON.stringify({ slug: slug(i), compose: compose(i, rev) }),
  });
  if (r.status !== 202) throw new Error(`deploy of ${slug(i)}: ${r.status} ${(await r.text()).slice(0, 300)}`);
  const { deploy_id } = (await r.json()) as { deploy_id: number };
  await waitFor(
    async () => {
      const app = (await (await s.api(`/api/apps/${slug(i)}`)).json()) as any;
      if (app?.last_deploy?.id !== deploy_id) return false;
      if (app.last_deploy.status === "failed") throw new Error(`deploy of ${slug(i)} failed: ${app.last_error}`);
      return app.last_deploy.status === "succeeded";
    },
    `${slug(i)} to deploy`,
    180_000,
  );
  return performance.now() - t;
}

/** One GET through the proxy with the app's Host; true on a 200. */
async function answers(proxy: number, i: number): Promise<boolean> {
  const r = await fetch(`http://127.0.0.1:${proxy}/`, { headers: { host: host(i) } }).catch(() => null);
  if (!r) return false;
  await r.arrayBuffer();
  return r.status === 200;
}

/** Wait until every app up to n answers through the proxy; ms from `since`. */
async function allRoutes(proxy: number, n: number, since: number, timeoutMs = 120_000): Promise<number> {
  const pending = new Set(Array.from({ length: n }, (_, k) => k + 1));
  const end = performance.now() + timeoutMs;
  while (pending.size) {
    if (performance.now() > end)
      throw new Error(`routes not answering after ${timeoutMs / 1000}s: ${[...pending].slice(0, 5).map(slug)}`);
    const batch = [...pending];
    const ok = await Promise.all(batch.map((i) => answers(proxy, i)));
    for (const [k, i] of batch.entries()) if (ok[k]) pending.delete(i);
    if (pending.size) await Bun.sleep(20);
  }
  return performance.now() - since;
}

async function timed(s: Server, path: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < n + 10; k++) {
    const t = performance.now();
    const r = await s.api(path);
    await r.arrayBuffer();
    if (!r.ok) throw new Error(`GET ${path}: ${r.status}`);
    if (k >= 10) out.push(performance.now() - t);
  }
  return out;
}

/** With --memory: SIGUSR2 to the server (SUNDECK_DEBUG_MEMORY=1), and the snapshot line it logs. */
async function snapshot(s: Server): Promise<string> {
  const before = s.recent.length;
  process.kill(s.pid, "SIGUSR2");
  const line = await waitFor(
    async () => s.recent.slice(Math.max(0, before - 5)).find((l) => l.includes("memory snapshot")),
    "the memory snapshot",
    10_000,
  ).catch(() => "(no snapshot)");
  s.recent.length = 0;
  return line;
}

/** Rows of the metrics tables, read from the server's database (read-only, WAL included). */
function metricRows(dir: string): number {
  const db = new Database(join(dir, "data", "sundeck.db"), { readonly: true });
  try {
    let n = 0;
    for (const t of ["container_metrics", "host_metrics", "request_stats"])
      n += db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${t}`).get()!.n;
    return n;
  } finally {
    db.close();
  }
}

function dbBytes(dir: string): number {
  const data = join(dir, "data");
  let n = 0;
  for (const f of readdirSync(data)) if (f.startsWith("sundeck.db")) n += statSync(join(data, f)).size;
  return n;
}

/**
 * The route table rebuilt with `n` apps, as the server does on every status change (edge.ts rebuild: every app's
 * routing, then the table and its host list), in this process: p50 of 200 builds in ms. The apps' routing is
 * prepared once, as the server keeps it cached per version.
 */
export function rebuildMs(n: number): number {
  const policy = { appDir: "/nonexistent/app", appsDir: "/nonexistent", dataDir: "/nonexistent/data", allowedHostPaths: [] };
  const apps = Array.from({ length: n }, (_, k) => {
    const p = prepare(compose(k + 1), "", policy);
    return { slug: slug(k + 1), endpoints: p.labels.endpoints, labels: p.labels, stopped: false };
  });
  const dflt = routeDefaults(defaults(), "off");
  const upstreams = (_slug: string, _service: string, port: number) => [`172.18.0.2:${port}`];
  const times: number[] = [];
  for (let k = 0; k < 220; k++) {
    const t = performance.now();
    const table = buildRouteTable({ apps, upstreams, defaults: dflt });
    JSON.stringify(table.hostTls());
    if (k >= 20) times.push(performance.now() - t);
  }
  return pct(times, 50);
}

interface Row {
  apps: number;
  deployPerApp: number;
  rss: number;
  listP50: number;
  listP99: number;
  appP50: number;
  appP99: number;
  redeploy: number;
  newRoute: number;
  cpuPerTick: number;
  rowsPerHour: number;
  rssIdle: number;
  rebuild: number;
  db: number;
  ready: number;
  routes: number;
  rssAfterRestart: number;
  /** The anonymous part of each RSS figure (heap, JIT code, stacks; the rest is file-backed, mostly the executable). */
  anonSettled: number;
  anonIdle: number;
  anonAfterRestart: number;
}

async function main() {
  for (const p of leftoverProjects(PREFIX)) removeProject(p);
  const proxy = await freePort();
  const env: Record<string, string> = { SUNDECK_LISTEN_ADDR: `127.0.0.1:${proxy}` };
  if (v.memory) env.SUNDECK_DEBUG_MEMORY = "1";
  let s = await startServer(BINARY, 1000, { env });
  const again = { dir: s.dir, key: s.key };
  const rows: Row[] = [];
  let deployed = 0;
  let failed = false;
  try {
    for (const n of COUNTS) {
      const t0 = performance.now();
      let next = deployed + 1;
      const worker = async () => {
        while (next <= n) {
          const i = next++;
          await deploy(s, i);
        }
      };
      await Promise.all(Array.from({ length: CONC }, worker));
      const step = n - deployed;
      const deployPerApp = (performance.now() - t0) / Math.max(1, step);
      deployed = n;
      await allRoutes(proxy, n, performance.now());
      await Bun.sleep(SETTLE * 1000);
      const { rss, anon: anonSettled } = rssOf(s.pid);
      if (v.memory) console.log(`memory after ${n} deploys: ${await snapshot(s)}`);
      const list = await timed(s, "/api/apps", SAMPLES);
      const one = await timed(s, `/api/apps/${slug(1)}`, SAMPLES);
      const redeploy = await deploy(s, 1, n);
      // a new app: from the POST to its route answering (the route table rebuilt with it)
      const tNew = performance.now();
      await deploy(s, n + 1);
      await waitFor(() => answers(proxy, n + 1), "the new route", 60_000);
      const newRoute = performance.now() - tNew;
      // idle: CPU and database growth over the window
      const cpu0 = cpuOf(s.pid);
      const rows0 = metricRows(s.dir);
      await Bun.sleep(IDLE * 1000);
      const cpuPerTick = ((cpuOf(s.pid) - cpu0) / IDLE) * 10;
      const { rss: rssIdle, anon: anonIdle } = rssOf(s.pid);
      if (v.memory) console.log(`memory after the idle window with ${n + 1} apps: ${await snapshot(s)}`);
      const db1 = dbBytes(s.dir);
      const rowsPerHour = ((metricRows(s.dir) - rows0) * 3600) / IDLE;
      // restart over the same data
      await s.stop();
      const tStart = performance.now();
      s = await startServer(BINARY, 1000, { env, again });
      await waitFor(async () => (await s.api("/api/health")).status === 200, "health", 60_000);
      const ready = performance.now() - tStart;
      const routes = await allRoutes(proxy, n + 1, tStart);
      await Bun.sleep(5000);
      const { rss: rssAfterRestart, anon: anonAfterRestart } = rssOf(s.pid);
      if (v.memory) console.log(`memory after a restart with ${n + 1} apps: ${await snapshot(s)}`);
      // the extra app goes, so the next step starts from n
      const del = await s.api(`/api/apps/${slug(n + 1)}?volumes=true`, { method: "DELETE" });
      await del.arrayBuffer();
      await waitFor(async () => (await s.api(`/api/apps/${slug(n + 1)}`)).status === 404, "the extra app to go", 60_000);
      const row: Row = {
        apps: n,
        deployPerApp,
        rss,
        listP50: pct(list, 50),
        listP99: pct(list, 99),
        appP50: pct(one, 50),
        appP99: pct(one, 99),
        redeploy,
        newRoute,
        cpuPerTick,
        rowsPerHour,
        rssIdle,
        rebuild: rebuildMs(n),
        db: db1,
        ready,
        routes,
        rssAfterRestart,
        anonSettled,
        anonIdle,
        anonAfterRestart,
      };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  } catch (e) {
    failed = true;
    console.error(`scale: ${(e as Error).message}`);
    for (const w of s.warnings.slice(-10)) console.error(`  server: ${w}`);
  } finally {
    await s.stop();
    const dir = s.dir;
    console.log(`\ncompose: ${Bun.spawnSync(["docker", "compose", "version", "--short"]).stdout.toString().trim() || "v1"}`);
    console.log(
      "| apps | deploy / app (ms) | RSS settled / after idle (MiB) | GET /api/apps p50 / p99 (ms) | GET /api/apps/{slug} p50 / p99 (ms) | redeploy (ms) | new app to route (ms) | route table rebuild (ms) | idle CPU per 10 s tick (ms) | metric rows / h | DB after (MiB) | restart: health / every route (ms) | RSS after restart (MiB) |",
    );
    console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const r of rows)
      console.log(
        `| ${r.apps} | ${ms(r.deployPerApp)} | ${r.rss.toFixed(1)} / ${r.rssIdle.toFixed(1)} | ${ms(r.listP50)} / ${ms(r.listP99)} | ${ms(r.appP50)} / ${ms(r.appP99)} | ${ms(r.redeploy)} | ${ms(r.newRoute)} | ${r.rebuild.toFixed(2)} | ${ms(r.cpuPerTick * 1000)} | ${Math.round(r.rowsPerHour)} | ${(r.db / 1024 ** 2).toFixed(1)} | ${ms(r.ready)} / ${ms(r.routes)} | ${r.rssAfterRestart.toFixed(1)} |`,
      );
    console.log("\nremoving the apps (docker, by label)");
    for (const p of leftoverProjects(PREFIX)) removeProject(p);
    if (!v.keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`kept ${dir}`);
  }
  process.exit(failed ? 1 : 0);
}

if (import.meta.main)
  main().catch((e) => {
    console.error(`scale: ${(e as Error).message}`);
    process.exit(2);
  });
