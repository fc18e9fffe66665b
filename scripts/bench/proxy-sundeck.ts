/**
 * Sundeck's reverse proxy for the proxy benchmark, in its own process and built the way `createEdge` (src/edge.ts)
 * builds it: a route table from `buildRouteTable` for one app whose only replica is the benchmark upstream,
 * `createProxyHandler` recording into a `RequestStats` that is drained into the metrics tiers of a real (temporary)
 * database every 10 s, and `startListeners` on 127.0.0.1:0: plain HTTP with tls `off`, or the TLS listener with
 * certificates from the local CA (`local`). The global rate limit is in force but raised out of the way (as a
 * `sundeck.ratelimit.*` label would), so the limiter runs on every request without refusing any.
 *
 *   bun scripts/bench/proxy-sundeck.ts --upstream 127.0.0.1:PORT --host app.bench.test --dir DIR [--tls off|local] [--http2]
 *
 * Prints `READY {"port":N}` once listening. On SIGTERM it stops the listener gracefully, flushes the stats and prints
 * `STATS {"recorded":N,"stored":N}` (requests counted by the stats sink, and what the database then holds).
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { defaults as configDefaults } from "../../src/config/schema";
import { openDb } from "../../src/db";
import { routeDefaults } from "../../src/edge";
import { CidrSet } from "../../src/lib/net";
import { systemClock } from "../../src/lib/time";
import { LogSink } from "../../src/log/logger";
import { RequestStats } from "../../src/modules/metrics/aggregator";
import { createRequestStatsStore, parseTiers } from "../../src/modules/metrics/request-stats";
import { createCertManager } from "../../src/proxy/certs/manager";
import { createCertStore } from "../../src/proxy/certs/store";
import { createProxyHandler } from "../../src/proxy/handler";
import { startListeners } from "../../src/proxy/listeners";
import { buildRouteTable, type RouteTable } from "../../src/proxy/route-table";
import type { TlsMode } from "../../src/proxy/types";

/** As in edge.ts. */
const FLUSH_EVERY_MS = 10_000;
/** The app's slug in the route table (and the stats). */
export const BENCH_APP = "bench";

async function main() {
  const { values: v } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      upstream: { type: "string" },
      host: { type: "string", default: "app.bench.test" },
      dir: { type: "string" },
      tls: { type: "string", default: "off" },
      http2: { type: "boolean", default: false },
    },
  });
  if (!v.upstream || !v.dir) throw new Error("--upstream and --dir are required");
  const mode = v.tls as TlsMode;
  if (mode !== "off" && mode !== "local") throw new Error("--tls must be off or local");
  const upstream = v.upstream;
  const [, portText] = upstream.split(":");

  const c = configDefaults();
  const sink = new LogSink({ stdout: false, level: "warn" });
  sink.subscribe((line) => process.stderr.write(`[sundeck] ${line}\n`));
  const log = sink.logger("proxy");
  const clock = systemClock;

  // request stats as in context.ts / edge.ts: in memory on the request path, into SQLite every 10 s off it
  const stats = new RequestStats({ clock });
  const db = openDb(join(v.dir, "sundeck.db"));
  const statsStore = createRequestStatsStore({ db, clock, log: sink.logger("stats"), tiers: parseTiers(c.metrics.tiers) });
  let recorded = 0;
  const flush = (all = false) => {
    try {
      const batches = stats.drain({ all });
      for (const b of batches) recorded += b.count;
      statsStore.store(batches);
    } catch (e) {
      log.error("storing request stats failed", { error: (e as Error).message });
    }
  };

  const certs = await createCertManager({
    store: createCertStore(v.dir),
    log: sink.logger("certs"),
    clock,
    mode,
    challenges: [],
  });

  const endpoint = { service: "web", hosts: [v.host], port: Number(portText), path: "/", tls: null };
  const table: RouteTable = buildRouteTable({
    apps: [
      {
        slug: BENCH_APP,
        endpoints: [endpoint],
        labels: {
          endpoints: [endpoint],
          // the global limit (200 per 60 s, burst 50, by ip) would refuse a benchmark from one address
          ratelimit: { requests: 1_000_000_000, window: "1s", burst: 1_000_000_000 },
          allow: null,
          registries: null,
        },
        stopped: false,
      },
    ],
    upstreams: () => [upstream],
    defaults: routeDefaults(c, mode),
  });
  const handler = createProxyHandler({ table: () => table, stats, log, proxyToken: "bench-token", clock });
  handler.tableChanged();
  await certs.setHosts(table.hostTls().map((h) => ({ host: h.host, tls: h.tls ?? mode, app: BENCH_APP })));

  const listeners = await startListeners({
    config: { listenAddr: "127.0.0.1:0", httpListenAddr: "", mode, http2: v.http2 },
    handler,
    certs,
    log,
    trusted: new CidrSet(c.trusted_proxies),
    plainHost: (h) => certs.isPlain(h),
  });
  await listeners.settled();
  const flushTimer = setInterval(() => flush(), FLUSH_EVERY_MS);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    clearInterval(flushTimer);
    await listeners.stop(true);
    certs.stop();
    flush(true);
    const row = db.sqlite.query("SELECT data FROM request_stats WHERE app_slug = ? AND tier = 'raw'").all(BENCH_APP) as {
      data: string;
    }[];
    const stored = row.reduce((n, r) => n + ((JSON.parse(r.data) as { count?: number }).count ?? 0), 0);
    db.sqlite.close();
    console.log(`STATS ${JSON.stringify({ recorded, stored })}`);
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  // the benchmark holds our stdin open: its end means the benchmark is gone
  process.stdin.on("end", () => void stop());
  process.stdin.resume();
  console.log(`READY ${JSON.stringify({ port: listeners.ports().main })}`);
}

main().catch((e) => {
  console.error(`sundeck proxy failed to start: ${(e as Error).stack ?? e}`);
  process.exit(2);
});
