/**
 * The proxy benchmark's moving parts: child processes (upstream, Sundeck's proxy, Caddy) that are all stopped on
 * exit, Caddy's configuration, one wrk run with its figures read back as JSON from a Lua `done()` hook, and the CPU
 * time a process spent (from /proc) so cost per request can be told apart from the machine's noise.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

/** Host every request is sent with (direct, Sundeck, Caddy alike); Sundeck's and Caddy's routes match it. */
export const HOST = "app.bench.test";

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** Every child process started, so each can be stopped on exit. */
const children = new Set<Subprocess>();

/** Stop every child still running: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopAll(graceMs = 3000): Promise<void> {
  const list = [...children];
  for (const p of list) if (p.exitCode === null && p.signalCode === null) p.kill("SIGTERM");
  await Promise.all(
    list.map(async (p) => {
      const done = await Promise.race([p.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
      if (!done) p.kill("SIGKILL");
      children.delete(p);
    }),
  );
}

/** A server child and the port it listens on. */
export interface Server {
  name: string;
  proc: Subprocess<"pipe", "pipe", "pipe">;
  port: number;
  /** Lines it printed on stdout after READY (Sundeck's STATS line). */
  lines: string[];
  stderr: () => string;
}

async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += dec.decode(chunk, { stream: true });
    let i = buf.indexOf("\n");
    while (i >= 0) {
      onLine(buf.slice(0, i));
      buf = buf.slice(i + 1);
      i = buf.indexOf("\n");
    }
  }
  if (buf) onLine(buf);
}

/** Keep the last 10-20 kB a child writes to `stream`; the returned function reads them. */
function tail(stream: ReadableStream<Uint8Array>): () => string {
  let text = "";
  void readLines(stream, (l) => {
    text += `${l}\n`;
    if (text.length > 20_000) text = text.slice(-10_000);
  });
  return () => text;
}

/**
 * Start a child that prints `READY {"port":N}` when listening. Its stdin stays an open pipe: the Bun children exit
 * when it closes, so they do not outlive a benchmark that was killed.
 */
export async function startReady(name: string, cmd: string[], timeoutMs = 20_000): Promise<Server> {
  const proc = Bun.spawn(cmd, { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  children.add(proc);
  const err = tail(proc.stderr);
  const lines: string[] = [];
  let ready: (port: number) => void = () => {};
  const port = new Promise<number>((r) => (ready = r));
  void readLines(proc.stdout, (l) => {
    if (l.startsWith("READY ")) ready((JSON.parse(l.slice(6)) as { port: number }).port);
    else lines.push(l);
  });
  const got = await Promise.race([
    port,
    proc.exited.then((code) => new Error(`${name} exited with ${code} before listening: ${err().trim().slice(-500)}`)),
    Bun.sleep(timeoutMs).then(() => new Error(`${name} did not start within ${timeoutMs} ms: ${err().trim().slice(-500)}`)),
  ]);
  if (got instanceof Error) throw got;
  return { name, proc, port: got, lines, stderr: err };
}

/** Stop a server child with SIGTERM and wait for it (SIGKILL after `graceMs`); returns its stdout lines. */
export async function stopServer(s: Server, graceMs = 5000): Promise<string[]> {
  if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill("SIGTERM");
  const done = await Promise.race([s.proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
  if (!done) s.proc.kill("SIGKILL");
  await s.proc.exited;
  children.delete(s.proc);
  await Bun.sleep(50);
  return s.lines;
}

/** Ports free on 127.0.0.1 right now (for Caddy, which needs them in its configuration). */
export function freePorts(n: number): number[] {
  const held = Array.from({ length: n }, () => Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }));
  const ports = held.map((l) => l.port);
  for (const l of held) l.stop(true);
  return ports;
}

/**
 * Caddy as a reverse proxy to `upstream`: admin, access logs and automatic HTTPS off on the plain listener, upstream
 * compression off (Caddy otherwise asks for gzip, which the benchmark does not want to measure), and the same Host
 * match as Sundeck's route. With `tlsPort` a second listener terminates TLS with certificates from Caddy's internal
 * CA (the host's, and one for 127.0.0.1, the SNI wrk sends), its root not installed anywhere.
 */
export function caddyConfig(o: { dir: string; port: number; tlsPort?: number; upstream: string }): object {
  const routes = (hosts: string[]) => [
    {
      match: [{ host: hosts }],
      handle: [
        {
          handler: "reverse_proxy",
          upstreams: [{ dial: o.upstream }],
          transport: { protocol: "http", compression: false },
        },
      ],
      terminal: true,
    },
  ];
  const servers: Record<string, object> = {
    plain: { listen: [`127.0.0.1:${o.port}`], automatic_https: { disable: true }, routes: routes([HOST]) },
  };
  const apps: Record<string, object> = { http: { servers } };
  if (o.tlsPort !== undefined) {
    servers.tls = {
      listen: [`127.0.0.1:${o.tlsPort}`],
      automatic_https: { disable_redirects: true },
      // clients without SNI (Bun's fetch to an IP) get the host's certificate
      tls_connection_policies: [{ default_sni: HOST }],
      // 127.0.0.1 in the matcher only makes Caddy hold a certificate for it (wrk sends the URL's IP as SNI)
      routes: routes([HOST, "127.0.0.1"]),
    };
    apps.tls = { automation: { policies: [{ subjects: [HOST, "127.0.0.1"], issuers: [{ module: "internal" }] }] } };
    apps.pki = { certificate_authorities: { local: { install_trust: false } } };
  }
  return {
    admin: { disabled: true },
    logging: { logs: { default: { level: "ERROR" } } },
    storage: { module: "file_system", root: join(o.dir, "caddy-data") },
    apps,
  };
}

/** Start Caddy with `config`; resolves once `probe` answers through it. */
export async function startCaddy(dir: string, config: object, port: number, probe: () => Promise<boolean>): Promise<Server> {
  const file = join(dir, "caddy.json");
  writeFileSync(file, JSON.stringify(config, null, 2));
  // HOME and XDG dirs inside the temporary directory: Caddy writes nothing outside it
  const env = { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, "xdg-data"), XDG_CONFIG_HOME: join(dir, "xdg-config") };
  const proc = Bun.spawn(["caddy", "run", "--config", file], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env });
  children.add(proc);
  const err = tail(proc.stderr);
  const lines: string[] = [];
  void readLines(proc.stdout, (l) => lines.push(l));
  const until = performance.now() + 20_000;
  while (performance.now() < until) {
    if (proc.exitCode !== null) throw new Error(`caddy exited with ${proc.exitCode}: ${err().trim().slice(-800)}`);
    if (await probe().catch(() => false)) return { name: "caddy", proc, port, lines, stderr: err };
    await Bun.sleep(100);
  }
  throw new Error(`caddy did not answer within 20 s: ${err().trim().slice(-800)}`);
}

/** CPU seconds (user + system, all threads) a process has used so far; NaN when it cannot be read. */
export async function cpuSeconds(pid: number): Promise<number> {
  try {
    const text = await Bun.file(`/proc/${pid}/stat`).text();
    // fields after the command name, which is in parentheses and may contain spaces: state is field 3, utime 14, stime 15
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / TICKS;
  } catch {
    return Number.NaN;
  }
}

/** One wrk run's figures (latencies in ms). */
export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  bytes: number;
  /** Socket errors (connect, read, write) and timeouts. */
  errors: number;
  /** Responses with a status of 400 or more. */
  badStatus: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

/**
 * The Lua script: with `meanDelayMs` each connection waits a random time (uniform, mean `meanDelayMs`, so the
 * connections do not fall into step) after every response before sending the next request, which paces the total
 * rate at about connections / (delay + latency). `done()` prints the summary as one JSON line.
 */
export function wrkScript(dir: string, name: string, meanDelayMs: number): string {
  const file = join(dir, `${name}.lua`);
  const pacing =
    meanDelayMs > 0
      ? [
          `local mean = ${meanDelayMs}`,
          "function setup(thread) math.randomseed(os.time()) end",
          "function delay() return math.floor(mean * (0.5 + math.random()) + 0.5) end",
        ]
      : [];
  writeFileSync(
    file,
    [
      "-- written by scripts/bench/proxy.ts",
      ...pacing,
      "function done(summary, latency, requests)",
      "  local e = summary.errors",
      '  io.write(string.format(\'BENCH {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,\' ..',
      '    \'"write":%d,"status":%d,"timeout":%d,"p50":%.1f,"p90":%.1f,"p99":%.1f,"p999":%.1f,"max":%.1f,"mean":%.2f}\\n\',',
      "    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,",
      "    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),",
      "    latency.max, latency.mean))",
      "end",
      "",
    ].join("\n"),
  );
  return file;
}

/** Run wrk once against `url` (sent with Host: HOST) and return its figures. */
export async function wrk(o: {
  url: string;
  threads: number;
  connections: number;
  seconds: number;
  script: string;
}): Promise<WrkResult> {
  const cmd = [
    "wrk",
    `-t${o.threads}`,
    `-c${o.connections}`,
    `-d${o.seconds}s`,
    "--latency",
    "--timeout",
    "5s",
    "-s",
    o.script,
    "-H",
    `Host: ${HOST}`,
    o.url,
  ];
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  children.add(proc);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  children.delete(proc);
  const line = out.split("\n").find((l) => l.startsWith("BENCH "));
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}) on ${o.url}: ${(err || out).trim().slice(-500)}`);
  const j = JSON.parse(line.slice(6)) as Record<string, number>;
  const seconds = j.duration_us / 1e6;
  return {
    requests: j.requests,
    seconds,
    rps: j.requests / seconds,
    bytes: j.bytes,
    errors: j.connect + j.read + j.write + j.timeout,
    badStatus: j.status,
    p50: j.p50 / 1000,
    p90: j.p90 / 1000,
    p99: j.p99 / 1000,
    p999: j.p999 / 1000,
    max: j.max / 1000,
    mean: j.mean / 1000,
  };
}
