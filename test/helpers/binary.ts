/**
 * The compiled executable under test (dist/sundeck, made by `bun run build`): run a command, or start `serve`
 * and learn its URL from the first log line.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { until } from "./http";

export const BINARY = resolve(import.meta.dir, "../../dist/sundeck");

/** Environment for a `serve` under test: ephemeral loopback ports, TLS off, a rate limit no test reaches. */
export const SERVE_ENV: Readonly<Record<string, string>> = {
  SUNDECK_MANAGEMENT_PORT: "0",
  SUNDECK_TLS_MODE: "off",
  SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
  SUNDECK_RATELIMIT_REQUESTS: "100000",
  SUNDECK_RATELIMIT_BURST: "100000",
};

/**
 * A server config made by `init` in `dir` (data and apps below it) with an admin user `ops` and an API key of theirs,
 * as an operator sets one up: the config path and the key.
 */
export async function initConfig(dir: string): Promise<{ config: string; key: string }> {
  const config = resolve(dir, "config.yaml");
  const init = await runCli(["init", "--config", config, "--data-dir", resolve(dir, "data"), "--apps-dir", resolve(dir, "apps")]);
  if (init.code !== 0) throw new Error(`init failed: ${init.stderr}`);
  const user = await runCli(["users", "create", "--config", config, "--username", "ops", "--role", "admin"], {
    env: { SUNDECK_PASSWORD: "ops-password-123" },
  });
  if (user.code !== 0) throw new Error(`users create failed: ${user.stderr}`);
  const key = await runCli(["apikey", "create", "--config", config, "--username", "ops", "--name", "test"]);
  if (key.code !== 0) throw new Error(`apikey create failed: ${key.stderr}`);
  return { config, key: key.stdout.trim() };
}

/** The binary's path; fails loudly when it has not been built (tests never skip for that). */
export function binary(): string {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`bun run build\` first (bun run test does)`);
  return BINARY;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `sundeck <args>` to completion. */
export async function runCli(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; stdin?: string } = {},
): Promise<RunResult> {
  const proc = Bun.spawn([binary(), ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

export interface RunningBinary {
  url: string;
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** Everything written to stdout so far. */
  output(): string;
  /** SIGTERM and wait; returns the exit code. */
  stop(): Promise<number>;
}

/** Start `sundeck serve` with `args` and wait for the listening line. */
export async function startBinary(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; timeout?: number } = {},
): Promise<RunningBinary> {
  const proc = Bun.spawn([binary(), "serve", ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  let err = "";
  const pump = async (s: ReadableStream<Uint8Array>, into: (t: string) => void) => {
    const dec = new TextDecoder();
    for await (const chunk of s) into(dec.decode(chunk, { stream: true }));
  };
  void pump(proc.stdout, (t) => (out += t));
  void pump(proc.stderr, (t) => (err += t));
  const url = await until(
    () => {
      if (proc.exitCode !== null) throw new Error(`sundeck exited ${proc.exitCode}: ${err || out}`);
      return /dashboard on (http:\/\/\S+)/.exec(out)?.[1];
    },
    { timeout: opts.timeout ?? 10_000, what: "sundeck to listen" },
  ).catch((e) => {
    proc.kill("SIGKILL");
    throw new Error(`${e.message}\nstdout: ${out}\nstderr: ${err}`);
  });
  return {
    url,
    proc,
    output: () => out,
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}
