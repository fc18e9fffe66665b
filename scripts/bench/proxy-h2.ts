/**
 * The HTTP/2 half of the proxy benchmark (`bun scripts/bench/proxy.ts --h2`, issue 29): Sundeck's TLS listener with
 * `proxy.http2` on and Caddy (`tls internal`, HTTP/2 on by default) on the same HTTP/1.1 upstream, loaded with h2load
 * (Debian nghttp2-client) at 32 connections x 10 streams, small and 100 KiB bodies; beside them the same two
 * listeners over HTTP/1.1 with wrk (50 connections), in the same run. Rounds interleaved, paths in rotated order,
 * medians. Verdict: Sundeck over h2 at 1.5x Caddy's requests per second or more, both bodies.
 */
import { join } from "node:path";
import { table } from "./measure";
import { caddyConfig, freePorts, HOST, startCaddy, startReady, stopAll, wrk, wrkScript } from "./proxy-run";

export interface H2Options {
  duration: number;
  rounds: number;
  warmup: number;
}

const PATHS = { small: "/small", large: "/large" } as const;
type Body = keyof typeof PATHS;
type Key = "sundeck h2" | "caddy h2" | "sundeck h1" | "caddy h1";

/** One h2load run at 32 connections x 10 streams: requests per second and failed requests. */
async function h2load(url: string, seconds: number, warmup: number): Promise<{ rps: number; failed: number }> {
  // the URL names the app (its :authority and SNI); the connection goes to the listener's address
  const at = new URL(url);
  const args = ["h2load", "-c", "32", "-m", "10", "-t", "1", "-D", String(seconds), `--connect-to=${at.host}`];
  if (warmup > 0) args.push("--warm-up-time", String(warmup));
  const p = Bun.spawn([...args, `https://${HOST}:${at.port}${at.pathname}`], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  if (!/Application protocol: h2/.test(out)) throw new Error(`h2load did not negotiate h2 with ${url}:\n${out.slice(-600)}`);
  const rps = Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(out)?.[1] ?? Number.NaN);
  const m = /requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded/.exec(out);
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  const bad = codes ? Number(codes[3]) + Number(codes[4]) : 0;
  return { rps, failed: (m ? Number(m[2]) - Number(m[3]) : Number.NaN) + bad };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const int = (n: number) => Math.round(n).toLocaleString("en-US");

/** Run the h2 comparison; returns false when a verdict failed or a request failed. */
export async function runH2(o: H2Options, dir: string, bench: string): Promise<boolean> {
  for (const tool of ["h2load", "caddy", "wrk"])
    if (Bun.spawnSync(["which", tool]).exitCode !== 0)
      throw new Error(`${tool} is missing (apt-get install -y nghttp2-client caddy wrk)`);
  const upstream = await startReady("upstream", ["bun", join(bench, "proxy-upstream.ts")]);
  const up = `127.0.0.1:${upstream.port}`;
  const sundeck = await startReady("sundeck-h2", [
    "bun",
    join(bench, "proxy-sundeck.ts"),
    "--upstream",
    up,
    "--host",
    HOST,
    "--dir",
    join(dir, "sundeck-h2"),
    "--tls",
    "local",
    "--http2",
  ]);
  const [caddyPort, caddyTlsPort] = freePorts(2);
  await startCaddy(
    dir,
    caddyConfig({ dir, port: caddyPort, tlsPort: caddyTlsPort, upstream: up }),
    caddyPort,
    async () => (await fetch(`http://127.0.0.1:${caddyPort}/small`, { headers: { host: HOST } })).status === 200,
  );
  const base: Record<"sundeck" | "caddy", string> = {
    sundeck: `https://127.0.0.1:${sundeck.port}`,
    caddy: `https://127.0.0.1:${caddyTlsPort}`,
  };
  const keys: Key[] = ["sundeck h2", "caddy h2", "sundeck h1", "caddy h1"];
  const results = new Map<string, Array<{ rps: number; failed: number }>>();
  const script = wrkScript(dir, "h2bench", 0);
  const once = async (k: Key, body: Body, seconds: number, warm: number) => {
    const url = `${base[k.startsWith("sundeck") ? "sundeck" : "caddy"]}${PATHS[body]}`;
    if (k.endsWith("h2")) return h2load(url, seconds, warm);
    const w = await wrk({ url, threads: 2, connections: 50, seconds, script });
    return { rps: w.rps, failed: w.errors + w.badStatus };
  };
  console.log(
    `upstream: Bun.serve static routes on ${up}; sundeck: TLS listener (tls local) with proxy.http2, request stats on; ` +
      `caddy: reverse_proxy, tls internal; h2: h2load -c32 -m10, h1: wrk -t2 -c50; ${o.rounds} rounds of ${o.duration} s`,
  );
  let group = 0;
  for (let round = 0; round < o.rounds; round++) {
    for (const body of ["small", "large"] as Body[]) {
      const order = keys.map((_, i) => keys[(i + group) % keys.length]);
      group++;
      const line: string[] = [];
      for (const k of order) {
        const r = await once(k, body, o.duration, round === 0 ? o.warmup : 0);
        const id = `${k}|${body}`;
        results.set(id, [...(results.get(id) ?? []), r]);
        line.push(`${k} ${int(r.rps)}/s${r.failed ? ` (${r.failed} failed!)` : ""}`);
      }
      console.log(`  round ${round + 1} ${body.padEnd(5)} ${line.join(", ")}`);
    }
  }
  await stopAll();
  const rps = (k: Key, b: Body) => median((results.get(`${k}|${b}`) ?? []).map((r) => r.rps));
  const rows = (["small", "large"] as Body[]).map((b) => [
    b === "small" ? "small (20 B)" : "100 KiB",
    int(rps("sundeck h2", b)),
    int(rps("caddy h2", b)),
    `${(rps("sundeck h2", b) / rps("caddy h2", b)).toFixed(2)}x`,
    int(rps("sundeck h1", b)),
    int(rps("caddy h1", b)),
    `${(rps("sundeck h1", b) / rps("caddy h1", b)).toFixed(2)}x`,
  ]);
  console.log(`\nrequests per second, medians of ${o.rounds} rounds`);
  console.log(
    table(["body", "sundeck h2", "caddy h2", "ratio", "sundeck h1", "caddy h1", "ratio"], rows, new Set([1, 2, 3, 4, 5, 6])),
  );
  let ok = true;
  for (const b of ["small", "large"] as Body[]) {
    const ratio = rps("sundeck h2", b) / rps("caddy h2", b);
    const pass = ratio >= 1.5;
    ok = ok && pass;
    console.log(`  ${pass ? "PASS" : "FAIL"}  h2, ${b}: sundeck ${ratio.toFixed(2)}x caddy (target 1.5x)`);
  }
  const failed = [...results.values()].flat().reduce((n, r) => n + r.failed, 0);
  if (failed > 0) {
    console.log(`  FAIL  ${failed} failed requests over all runs: the figures above are not valid`);
    ok = false;
  }
  return ok;
}
