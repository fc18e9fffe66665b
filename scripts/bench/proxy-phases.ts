/**
 * Where Sundeck's proxy spends its own time per request, without the network: each JavaScript step the raw engine
 * (src/proxy/h1) takes for one keep-alive exchange, timed in a loop on the same bytes a benchmark request
 * brings (request head in, request head out, response head in, response head out, stats), then all of them in a row.
 * Run by proxy.ts in its own process; also on its own:
 *
 *   bun scripts/bench/proxy-phases.ts [--iterations 200000] [--headers wrk|browser]
 *
 * Times are ns per call (median of 5 batches after warm-up) on one core while nothing else of the benchmark runs.
 * Socket reads and writes, TLS and the kernel are not in them (the benchmark's CPU per request column has those).
 */
import { parseArgs } from "node:util";
import { LogSink } from "../../src/log/logger";
import { RequestStats } from "../../src/modules/metrics/aggregator";
import { headEnd, parseRequestHead, parseResponseHead, requestFraming, responseFraming } from "../../src/proxy/h1/framing";
import { requestTarget } from "../../src/proxy/h1/request-target";
import { serializeHead } from "../../src/proxy/h1/wire";
import { createProxyHandler } from "../../src/proxy/handler";
import { headerOptions, responseHeaderPairs, upstreamHeaderPairs } from "../../src/proxy/headers";
import { buildRouteTable } from "../../src/proxy/route-table";
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
  let reqText = "GET /small HTTP/1.1\r\n";
  for (const [k, v] of Object.entries(headers)) reqText += `${k}: ${v}\r\n`;
  const reqBytes = Buffer.from(`${reqText}\r\n`, "latin1");
  const resBytes = Buffer.from(
    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 20\r\ndate: Sun, 22 Nov 2026 10:00:00 GMT\r\n\r\n",
    "latin1",
  );
  const log = new LogSink({ stdout: false, level: "error" }).logger("proxy");
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
  const stats = new RequestStats();
  const { core } = createProxyHandler({ table: () => tableOf, stats, log, proxyToken: "t" });
  const info = { clientIp: "127.0.0.1", secure: false };

  const readRequest = () => parseRequestHead(reqBytes.toString("latin1", 0, headEnd(reqBytes) - 4));
  const head = readRequest();
  const line = { method: "GET", authority: HOST, path: "/small", target: "/small", headers: head.headers };
  const admitted = () => {
    const a = core.admit(line, info, performance.now());
    if (!("forward" in a)) throw new Error("the bench route refused the request");
    return a.forward;
  };
  const a = admitted();
  const upstreamHead = () =>
    serializeHead("GET /small HTTP/1.1", upstreamHeaderPairs(head.headers, headerOptions(a, core.proxyToken, true)));
  const readResponse = () => parseResponseHead(resBytes.toString("latin1", 0, headEnd(resBytes) - 4));
  const res = readResponse();
  const clientHead = () => Buffer.from(serializeHead("HTTP/1.1 200 OK", responseHeaderPairs(res.headers, false)), "latin1");

  const out: Phase[] = [];
  const add = async (name: string, where: string, fn: () => unknown) => out.push({ name, where, ns: await time(n, fn) });

  await add("find and parse the request head", "h1/framing.ts parseRequestHead", readRequest);
  await add("request framing", "h1/framing.ts requestFraming", () => requestFraming(head));
  await add("Host and target", "h1/request-target.ts requestTarget", () => requestTarget(head));
  await add("route, allowlist, rate limit, replica", "handler.ts admit", admitted);
  await add(`upstream head (${headerSet} request)`, "headers.ts upstreamHeaderPairs", upstreamHead);
  await add("find and parse the response head", "h1/framing.ts parseResponseHead", readResponse);
  await add("response framing", "h1/framing.ts responseFraming", () => responseFraming("GET", 200, res));
  await add("client head", "headers.ts responseHeaderPairs", clientHead);
  await add("stats record", "modules/metrics/aggregator.ts record", () => core.record(a, 200, 20));
  await add("all of the above in a row", "-", () => {
    const h = readRequest();
    requestFraming(h);
    requestTarget(h);
    const f = admitted();
    serializeHead("GET /small HTTP/1.1", upstreamHeaderPairs(h.headers, headerOptions(f, core.proxyToken, true)));
    const r = readResponse();
    responseFraming("GET", r.status, r);
    Buffer.from(serializeHead("HTTP/1.1 200 OK", responseHeaderPairs(r.headers, false)), "latin1");
    core.record(f, 200, 20);
  });
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
