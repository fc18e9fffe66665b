/**
 * Where Sundeck's proxy spends its own time per request, without the network: each step of the request path
 * (src/proxy/listeners.ts `info`, handler.ts, forward.ts, headers.ts, stats.ts) timed in a loop on the same inputs a
 * benchmark request brings, then the whole handler with `fetch` replaced by a stub that answers at once, next to a
 * handler that only calls that stub (the floor any fetch-based proxy pays). Run by proxy.ts in its own process;
 * also on its own:
 *
 *   bun scripts/bench/proxy-phases.ts [--iterations 200000] [--headers wrk|browser]
 *
 * Times are ns per call (median of 5 batches after warm-up) on one core while nothing else of the benchmark runs.
 * They are the JavaScript-side costs only: what Bun's native fetch does with the headers and the signal it is given,
 * and its HTTP client thread, are not in them (the benchmark's CPU per request column has those).
 */
import { parseArgs } from "node:util";
import { normalizeIp } from "../../src/lib/net";
import { RateLimiter } from "../../src/lib/ratelimit";
import { systemClock } from "../../src/lib/time";
import { LogSink } from "../../src/log/logger";
import { WaitingAttempts } from "../../src/proxy/forward";
import { createProxyHandler, splitUrl } from "../../src/proxy/handler";
import { cleanResponseHeaders, upstreamHeaders } from "../../src/proxy/headers";
import { buildRouteTable } from "../../src/proxy/route-table";
import { RequestStats } from "../../src/proxy/stats";
import { nextUpstream } from "../../src/proxy/upstreams";
import { table } from "./measure";

const HOST = "app.bench.test";
const UPSTREAM = "127.0.0.1:9";

/** Request headers: what wrk sends (Host only), or a typical browser's. */
const HEADER_SETS: Record<string, Record<string, string>> = {
  wrk: { host: HOST },
  browser: {
    host: HOST,
    "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "accept-language": "en-US,en;q=0.5",
    "accept-encoding": "gzip, deflate, br, zstd",
    connection: "keep-alive",
    cookie: "session=0123456789abcdef0123456789abcdef; theme=dark",
    "upgrade-insecure-requests": "1",
    "sec-fetch-dest": "document",
    "sec-fetch-mode": "navigate",
    "sec-fetch-site": "none",
    "sec-fetch-user": "?1",
    priority: "u=0, i",
  },
};

export interface Phase {
  name: string;
  where: string;
  ns: number;
}

/** ns per call of `fn` (median of 5 batches of `n`, after one warm-up batch). */
async function time(n: number, fn: () => unknown): Promise<number> {
  const batch = async () => {
    const t0 = Bun.nanoseconds();
    for (let i = 0; i < n; i++) {
      const r = fn();
      if (r instanceof Promise) await r;
    }
    return (Bun.nanoseconds() - t0) / n;
  };
  await batch();
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) xs.push(await batch());
  xs.sort((a, b) => a - b);
  return xs[2];
}

export async function phases(n: number, headerSet: string): Promise<Phase[]> {
  const headers = HEADER_SETS[headerSet];
  const makeReq = () => new Request(`http://${HOST}/small`, { headers });
  const req = makeReq();
  const sink = new LogSink({ stdout: false, level: "error" });
  const log = sink.logger("proxy");
  const endpoint = { service: "web", hosts: [HOST], port: 9, path: "/", tls: null };
  const tableOf = buildRouteTable({
    apps: [
      {
        slug: "bench",
        endpoints: [endpoint],
        labels: { endpoints: [endpoint], ratelimit: { requests: 1e9, window: "1s", burst: 1e9 }, allow: null, registries: null },
        stopped: false,
      },
    ],
    upstreams: () => [UPSTREAM],
    defaults: { ratelimit: { requests: 200, windowMs: 60_000, burst: 50, by: "ip" }, tls: "off" },
  });
  const route = tableOf.lookup(HOST, "/small")!;
  const limiter = new RateLimiter({ requests: 1e9, windowMs: 1000, burst: 1e9, maxKeys: 20_000 }, systemClock);
  const stats = new RequestStats();
  const waiting = new WaitingAttempts();
  const hOpts = { clientIp: "127.0.0.1", secure: false, host: HOST, trustForwarded: false, proxyToken: null, bodyless: true };
  const upstreamRes = () =>
    new Response("hello from upstream\n", { headers: { "content-type": "text/plain", "content-length": "20" } });

  const out: Phase[] = [];
  const add = async (name: string, where: string, fn: () => unknown) => out.push({ name, where, ns: await time(n, fn) });

  await add("client address (normalizeIp of the peer)", "listeners.ts info()", () => normalizeIp("127.0.0.1"));
  await add("split the URL", "handler.ts splitUrl", () => splitUrl(req.url));
  await add("route lookup", "route-table.ts lookup", () => tableOf.lookup(HOST, "/small"));
  await add("websocket check (Upgrade header)", "handler.ts isWebSocketUpgrade", () => req.headers.get("upgrade"));
  await add("rate limiter take", "lib/ratelimit.ts take", () => limiter.take("127.0.0.1"));
  await add("round-robin upstream", "upstreams.ts nextUpstream", () => nextUpstream(route));
  await add(`upstream headers (${headerSet} request)`, "headers.ts upstreamHeaders", () => upstreamHeaders(req.headers, hOpts));
  await add("AbortController + setTimeout/clearTimeout", "forward.ts", () => {
    const ac = new AbortController();
    clearTimeout(setTimeout(() => ac.abort(), 60_000));
  });
  await add("client abort listener (new request each time)", "forward.ts req.signal", () => {
    const r = makeReq();
    const f = () => {};
    r.signal.addEventListener("abort", f, { once: true });
    r.signal.removeEventListener("abort", f);
  });
  await add("  of which: new Request (subtract)", "-", () => makeReq());
  await add("waiting attempts add/delete", "forward.ts WaitingAttempts", () => {
    const ac = new AbortController();
    waiting.add(UPSTREAM, ac);
    waiting.delete(UPSTREAM, ac);
  });
  await add("  of which: new AbortController (subtract)", "-", () => new AbortController());
  await add("clean response headers", "headers.ts cleanResponseHeaders", () =>
    cleanResponseHeaders(upstreamRes().headers, false),
  );
  await add("  of which: new upstream Response (subtract)", "-", () => upstreamRes());
  await add("stats record", "stats.ts record", () => stats.record("bench", { status: 200, ms: 0.42, path: "/small", bytes: 20 }));

  // the whole handler with fetch answering at once, against a handler doing nothing but that fetch
  const realFetch = globalThis.fetch;
  const stub = (async () => upstreamRes()) as unknown as typeof fetch;
  globalThis.fetch = stub;
  try {
    const handler = createProxyHandler({ table: () => tableOf, stats, log, proxyToken: "t" });
    const server = {} as Parameters<typeof handler.fetch>[1];
    const conn = { clientIp: "127.0.0.1", secure: false };
    await add("whole handler, fetch stubbed", "handler.ts fetch", () => handler.fetch(makeReq(), server, conn));
    await add("bare proxy handler, fetch stubbed", "-", () =>
      stub(`http://${UPSTREAM}/small`, { method: "GET", headers: makeReq().headers, redirect: "manual" }),
    );
  } finally {
    globalThis.fetch = realFetch;
  }
  return out;
}

if (import.meta.main) {
  const { values: v } = parseArgs({
    args: Bun.argv.slice(2),
    options: { iterations: { type: "string", default: "200000" }, headers: { type: "string", default: "wrk" } },
  });
  if (!(v.headers! in HEADER_SETS)) throw new Error("--headers must be wrk or browser");
  const list = await phases(Number(v.iterations), v.headers!);
  console.log(
    table(
      ["step", "where", "ns/call"],
      list.map((p) => [p.name, p.where, p.ns.toFixed(0)]),
      new Set([2]),
    ),
  );
}
