/**
 * The HTTP/2 design spike (issue 29: "measure both before choosing"): what a `Bun.serve({ tls, http2: true })`
 * terminator gives on this machine, against Caddy's h2 reverse proxy on the same upstream, before any of Sundeck's h2
 * is written. Paths, each HTTP/2 over TLS to the benchmark's static upstream (proxy-upstream.ts, HTTP/1.1):
 *   - bun-fetch: Bun.serve h2 whose handler forwards with `fetch` (Bun's own HTTP/1.1 client pool, no routing);
 *   - bun-pipe: the same behind a plain TCP pipe on the event loop (Bun.listen to Bun.connect): the hand-off the
 *     terminator design needs, where the TLS listener peeks the ClientHello and passes an `h2` connection on whole;
 *   - tls-front: the raw engine's TLS front kept (node:net + node:tls, ALPN `h2` chosen there), the decrypted bytes
 *     of an h2 connection piped to a cleartext (prior knowledge) Bun.serve h2 with the same `fetch` handler: one TLS,
 *     and the front sees every frame it passes on;
 *   - caddy: Caddy 2.6 `reverse_proxy`, `tls internal`, h2 (its default on TLS).
 * Load: `h2load -c 32 -m 10` (32 connections x 10 streams) for `--seconds`, small (20 B) and 100 KiB bodies, paths and
 * bodies in rotated order for `--rounds` rounds; medians. A static-response row (Bun.serve h2 answering itself, and
 * through the pipe) shows the terminator's own ceiling.
 *
 *   bun scripts/bench/h2-designs.ts [--rounds 2] [--seconds 8]
 *
 * Needs h2load (Debian nghttp2-client), caddy and openssl. Exit 2 when a tool is missing.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TLSSocket } from "node:tls";
import { parseArgs } from "node:util";
import type { Socket } from "bun";
import { table } from "./measure";
import { caddyConfig, freePorts, HOST, type Server, startCaddy, startReady, stopAll } from "./proxy-run";
import { announce } from "./proxy-upstream";

const { values: v } = parseArgs({
  options: {
    rounds: { type: "string", default: "2" },
    seconds: { type: "string", default: "8" },
    serve: { type: "string" },
    upstream: { type: "string" },
    target: { type: "string" },
    dir: { type: "string" },
  },
});

/** The child modes: a Bun.serve h2 terminator (forwarding or answering itself), or the TCP pipe in front of one. */
function child(): void {
  const dir = v.dir!;
  const tls = { key: Bun.file(join(dir, "key.pem")), cert: Bun.file(join(dir, "cert.pem")) };
  if (v.serve === "pipe") {
    const target = Number(v.target);
    type Pipe = { up: Socket<undefined> | null; held: Buffer[] };
    const l = Bun.listen<Pipe>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        async open(s) {
          s.data = { up: null, held: [] };
          const up = await Bun.connect({
            hostname: "127.0.0.1",
            port: target,
            socket: {
              data(_u, b) {
                s.write(b);
              },
              close() {
                s.end();
              },
              error() {},
            },
          });
          for (const b of s.data.held) up.write(b);
          s.data = { up, held: [] };
        },
        data(s, b) {
          if (s.data.up) s.data.up.write(b);
          else s.data.held.push(Buffer.from(b));
        },
        close(s) {
          s.data.up?.end();
        },
        error() {},
      },
    });
    announce({ port: l.port, stop: () => l.stop(true) });
    return;
  }
  if (v.serve === "front") {
    // the raw engine's TLS front as it is (node:net + node:tls, ALPN chosen there), an h2 connection's decrypted
    // bytes piped to a cleartext h2 (prior knowledge) Bun.serve: one TLS, and the front sees every frame
    const target = Number(v.target);
    const key = readFileSync(join(dir, "key.pem"));
    const cert = readFileSync(join(dir, "cert.pem"));
    const srv = createNetServer((raw) => {
      raw.setNoDelay(true);
      const t = new TLSSocket(raw, { isServer: true, key, cert, ALPNProtocols: ["h2", "http/1.1"] });
      t.on("error", () => t.destroy());
      t.once("secure", async () => {
        if (t.alpnProtocol !== "h2") return t.destroy();
        const held: Buffer[] = [];
        const early = (b: Buffer) => held.push(b);
        t.on("data", early);
        const up = await Bun.connect({
          hostname: "127.0.0.1",
          port: target,
          socket: {
            data(_u, b) {
              t.write(b);
            },
            close() {
              t.end();
            },
            error() {},
          },
        });
        t.off("data", early);
        for (const b of held) up.write(b);
        t.on("data", (b: Buffer) => up.write(b));
        t.on("close", () => up.end());
      });
    });
    srv.listen(0, "127.0.0.1", () => announce({ port: (srv.address() as { port: number }).port, stop: () => srv.close() }));
    return;
  }
  const upstream = `http://127.0.0.1:${v.upstream}`;
  const own = { small: "x".repeat(20), large: "y".repeat(100 * 1024) };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    ...(v.serve!.endsWith("-h2c") ? {} : { tls }),
    http2: true,
    async fetch(req: Request) {
      const path = new URL(req.url).pathname;
      if (v.serve!.startsWith("static")) return new Response(path === "/large" ? own.large : own.small);
      const r = await fetch(upstream + path, { headers: { host: HOST } });
      return new Response(r.body, { status: r.status, headers: { "content-type": r.headers.get("content-type") ?? "" } });
    },
  } as Parameters<typeof Bun.serve>[0]);
  announce(server);
}

/** One h2load run: requests per second, and how many failed. */
async function h2load(port: number, path: string, seconds: number): Promise<{ rps: number; failed: number }> {
  const p = Bun.spawn(
    [
      "h2load",
      "-c",
      "32",
      "-m",
      "10",
      "-t",
      "1",
      "-D",
      String(seconds),
      "--warm-up-time",
      "1",
      `https://127.0.0.1:${port}${path}`,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const out = await new Response(p.stdout).text();
  await p.exited;
  const rps = Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(out)?.[1] ?? Number.NaN);
  const m = /requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded/.exec(out);
  if (!/Application protocol: h2/.test(out)) throw new Error(`h2load did not negotiate h2 on ${port}:\n${out.slice(-600)}`);
  return { rps, failed: m ? Number(m[1]) - Number(m[3]) : Number.NaN };
}

/** The middle value (of two, the higher). */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  for (const tool of ["h2load", "caddy", "openssl"])
    if (Bun.spawnSync(["which", tool]).exitCode !== 0) {
      console.error(`${tool} is missing (apt-get install -y nghttp2-client caddy openssl)`);
      process.exit(2);
    }
  const dir = mkdtempSync(join(tmpdir(), "sundeck-h2spike-"));
  try {
    const cert = Bun.spawnSync([
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-subj",
      `/CN=${HOST}`,
      "-addext",
      `subjectAltName=DNS:${HOST},IP:127.0.0.1`,
    ]);
    if (cert.exitCode !== 0) throw new Error(cert.stderr.toString());
    const self = [process.execPath, import.meta.path, "--dir", dir];
    const upstream = await startReady("upstream", [process.execPath, join(import.meta.dir, "proxy-upstream.ts")]);
    const fetchH2 = await startReady("bun-fetch", [...self, "--serve", "fetch", "--upstream", String(upstream.port)]);
    const staticH2 = await startReady("bun-static", [...self, "--serve", "static"]);
    const pipeFetch = await startReady("bun-pipe", [...self, "--serve", "pipe", "--target", String(fetchH2.port)]);
    const pipeStatic = await startReady("pipe-static", [...self, "--serve", "pipe", "--target", String(staticH2.port)]);
    const fetchH2c = await startReady("h2c-fetch", [...self, "--serve", "fetch-h2c", "--upstream", String(upstream.port)]);
    const staticH2c = await startReady("h2c-static", [...self, "--serve", "static-h2c"]);
    const frontFetch = await startReady("front-fetch", [...self, "--serve", "front", "--target", String(fetchH2c.port)]);
    const frontStatic = await startReady("front-static", [...self, "--serve", "front", "--target", String(staticH2c.port)]);
    const [plain, tlsPort] = freePorts(2);
    const caddy: Server = await startCaddy(
      dir,
      caddyConfig({ dir, port: plain, tlsPort, upstream: `127.0.0.1:${upstream.port}` }),
      tlsPort,
      async () => (await fetch(`http://127.0.0.1:${plain}/small`, { headers: { host: HOST } })).status === 200,
    );
    const paths: Record<string, number> = {
      "bun-fetch": fetchH2.port,
      "bun-pipe": pipeFetch.port,
      "tls-front": frontFetch.port,
      caddy: caddy.port,
      "static (Bun h2 itself)": staticH2.port,
      "static through the pipe": pipeStatic.port,
      "static behind the tls front": frontStatic.port,
    };
    const names = Object.keys(paths);
    const got: Record<string, { rps: number[]; failed: number }> = {};
    for (let r = 0; r < Number(v.rounds); r++)
      for (const body of r % 2 ? ["/large", "/small"] : ["/small", "/large"])
        for (let i = 0; i < names.length; i++) {
          const name = names[(i + r) % names.length];
          const res = await h2load(paths[name], body, Number(v.seconds));
          const key = `${name} ${body}`;
          got[key] ??= { rps: [], failed: 0 };
          got[key].rps.push(res.rps);
          got[key].failed += res.failed;
          console.log(`round ${r + 1} ${key}: ${res.rps.toFixed(0)} req/s, ${res.failed} failed`);
        }
    const rps = (name: string, body: string) => median(got[`${name} ${body}`].rps);
    const rows = names.map((n) => [
      n,
      rps(n, "/small").toFixed(0),
      rps(n, "/large").toFixed(0),
      n.startsWith("static")
        ? ""
        : `${(rps(n, "/small") / rps("caddy", "/small")).toFixed(2)} / ${(rps(n, "/large") / rps("caddy", "/large")).toFixed(2)}`,
      String(got[`${n} /small`].failed + got[`${n} /large`].failed),
    ]);
    console.log(`\nh2load -c 32 -m 10, ${v.seconds} s x ${v.rounds} rounds, medians`);
    console.log(table(["path", "20 B req/s", "100 KiB req/s", "x Caddy (20 B / 100 KiB)", "failed"], rows, new Set([1, 2, 4])));
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (v.serve) child();
else await main();
