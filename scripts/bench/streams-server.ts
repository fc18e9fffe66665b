/**
 * Server side of the log streams benchmark: the compiled binary in its own process (temp config, data and apps dirs,
 * TLS off, stream caps raised), a super-admin API key, app deploys and removal through the API, /api/system/info,
 * and the process's resident memory and CPU time from /proc.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SystemInfo } from "../../src/shared/system";

/** `streams` of GET /api/system/info. */
export type StreamsInfo = SystemInfo["streams"];

/** The compiled server, running. */
export interface Server {
  pid: number;
  url: string;
  key: string;
  dir: string;
  /** Lines the server printed that mention a warning or an error. */
  warnings: string[];
  /** The last 500 lines the server printed. */
  recent: string[];
  api(path: string, init?: RequestInit): Promise<Response>;
  streams(): Promise<StreamsInfo>;
  stop(): Promise<void>;
}

const run = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.slice(0, 3).join(" ")} failed: ${r.stderr.toString().trim()}`);
  return r.stdout.toString();
};

/** Wait until `fn` gives a truthy value. */
export async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, what: string, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

/**
 * Start `binary serve` with a fresh config; stream caps at `maxStreams` in all and per user. `again` starts it over
 * the directory and key of an earlier run (a restart); `env` adds to or overrides the server's environment.
 */
export async function startServer(
  binary: string,
  maxStreams: number,
  o: { again?: { dir: string; key: string }; env?: Record<string, string> } = {},
): Promise<Server> {
  const dir = o.again?.dir ?? mkdtempSync(join(tmpdir(), "sundeck-streambench-"));
  const config = join(dir, "config.yaml");
  let key = o.again?.key;
  if (!key) {
    run([binary, "init", "--config", config, "--data-dir", join(dir, "data"), "--apps-dir", join(dir, "apps")]);
    const text = readFileSync(config, "utf8");
    writeFileSync(
      config,
      `${text
        .replace(/^listen_addr:.*$/m, "")
        .replace(/^management_port:.*$/m, "")
        .replace(/^ {2}mode:.*$/m, "  mode: off")}\nlisten_addr: 127.0.0.1:0\nmanagement_port: 0\n`,
    );
    const pass = ["--password", "bench-streams-password"];
    run([binary, "users", "create", "--config", config, "--username", "bench", ...pass, "--role", "super_admin"]);
    const out = run([binary, "apikey", "create", "--config", config, "--username", "bench", "--name", "streams"]);
    key = /sd_[0-9a-f]+/.exec(out)?.[0];
    if (!key) throw new Error(`no API key in: ${out}`);
  }
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/root",
    SUNDECK_TLS_MODE: "off",
    SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
    SUNDECK_MANAGEMENT_PORT: "0",
    SUNDECK_RATELIMIT_REQUESTS: "1000000",
    SUNDECK_RATELIMIT_BURST: "1000000",
    SUNDECK_STREAMS_MAX_OPEN: String(maxStreams),
    SUNDECK_STREAMS_MAX_PER_USER: String(maxStreams),
    ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
    ...(process.env.BUN_OPTIONS ? { BUN_OPTIONS: process.env.BUN_OPTIONS } : {}),
    ...o.env,
  };
  const proc = Bun.spawn([binary, "serve", "--config", config], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let printed = "";
  const warnings: string[] = [];
  const recent: string[] = [];
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    let rest = "";
    for await (const c of s) {
      rest += dec.decode(c, { stream: true });
      const lines = rest.split("\n");
      rest = lines.pop() ?? "";
      for (const l of lines) {
        if (printed.length < 64 * 1024) printed += `${l}\n`;
        recent.push(l);
        if (recent.length > 500) recent.shift();
        if (/warn|error|fail/i.test(l) && warnings.length < 200) warnings.push(l);
      }
    }
  };
  void drain(proc.stdout);
  void drain(proc.stderr);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    proc.kill("SIGTERM");
    const killer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
    await proc.exited;
    clearTimeout(killer);
  };
  try {
    const url = await waitFor(
      async () => {
        if (proc.exitCode !== null) throw new Error(`the server exited (${proc.exitCode}):\n${printed.slice(-2000)}`);
        return /dashboard on (http:\/\/\S+)/.exec(printed)?.[1];
      },
      "the server",
      30_000,
    ).catch((e) => {
      throw new Error(`${(e as Error).message}\n${printed.slice(-2000)}`);
    });
    const api = (path: string, init: RequestInit = {}) =>
      fetch(url + path, {
        ...init,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers },
      });
    const info = await (await api("/api/system/info")).json();
    if (info.docker !== "ok") throw new Error(`the server found no usable Docker: ${info.docker}`);
    return {
      pid: proc.pid,
      url,
      key,
      dir,
      warnings,
      recent,
      api,
      async streams() {
        const r = await api("/api/system/info");
        if (!r.ok) throw new Error(`GET /api/system/info: ${r.status}`);
        return ((await r.json()) as { streams: StreamsInfo }).streams;
      },
      stop,
    };
  } catch (e) {
    await stop();
    if (!o.again) rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Deploy `compose` as `slug` and wait until the app is running. */
export async function deployApp(s: Server, slug: string, compose: string): Promise<void> {
  const r = await s.api("/api/apps/deploy", { method: "POST", body: JSON.stringify({ slug, compose }) });
  if (r.status !== 202) throw new Error(`deploy of ${slug}: ${r.status} ${(await r.text()).slice(0, 300)}`);
  await waitFor(async () => {
    const app = (await (await s.api(`/api/apps/${slug}`)).json()) as any;
    if (app?.last_deploy?.status === "failed") throw new Error(`deploy of ${slug} failed: ${app.last_error}`);
    return app?.status === "running";
  }, `${slug} to run`);
}

/** Remove an app through the API (with volumes) and wait until GET answers 404; false when that did not happen. */
export async function removeApp(s: Server, slug: string, timeoutMs = 60_000): Promise<boolean> {
  const r = await s.api(`/api/apps/${slug}?volumes=true`, { method: "DELETE" }).catch(() => null);
  // no answer (the server is gone, e.g. Ctrl-C reached it too): the caller removes the project by label
  if (!r) return false;
  if (r.status === 404) return true;
  await r.arrayBuffer();
  return waitFor(async () => (await s.api(`/api/apps/${slug}`)).status === 404, `${slug} to go`, timeoutMs).catch(() => false);
}

/** Compose projects named `sundeck-<prefix>...` that exist now (leftovers of an interrupted run). */
export function leftoverProjects(prefix: string): string[] {
  const out = Bun.spawnSync(["docker", "ps", "-a", "--format", '{{.Label "com.docker.compose.project"}}'])
    .stdout.toString()
    .split("\n");
  return [...new Set(out.filter((p) => p.startsWith(`sundeck-${prefix}`)))];
}

/** Resident memory in MiB (all, and its anonymous part) from /proc/<pid>/status. */
export function rssOf(pid: number): { rss: number; anon: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, anon: kb("RssAnon") / 1024 };
}

const TICKS = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

/** User + system CPU seconds a process has used, from /proc/<pid>/stat. */
export function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

/** The Docker daemon's pid when this user can read its /proc entry (for its CPU time), else null. */
export function dockerdPid(): number | null {
  const pid = Number(Bun.spawnSync(["pidof", "dockerd"]).stdout.toString().trim().split(" ")[0]);
  if (!pid) return null;
  try {
    cpuOf(pid);
    return pid;
  } catch {
    return null;
  }
}

/** Busy CPU seconds of the whole machine (all CPUs, everything but idle and iowait), from /proc/stat. */
export function machineCpu(): number {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const busy = f.reduce((a, b) => a + b, 0) - f[3] - (f[4] ?? 0);
  return busy / TICKS;
}
