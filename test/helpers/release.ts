/**
 * Release fixtures for the installer and upgrade tests: host-only releases built by scripts/release.ts (no bytecode,
 * a few seconds each), served from a local HTTP server, and install.sh run in a throwaway root with a fake systemctl.
 */
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tempDir } from "./tmp";

export const REPO = resolve(import.meta.dir, "../..");
const PATH = process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a command to completion. */
export async function exec(cmd: string[], opts: { env?: Record<string, string>; cwd?: string; stdin?: Blob } = {}): Promise<Run> {
  const p = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: { PATH, HOME: process.env.HOME ?? "/root", ...opts.env },
    stdin: opts.stdin ?? "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/** Build a release of this machine's target only, with `version` baked in, into `dir`. */
export async function buildRelease(dir: string, version: string): Promise<void> {
  const r = await exec(["bun", "run", "scripts/release.ts"], {
    cwd: REPO,
    env: {
      SUNDECK_RELEASE_TARGETS: `linux-${process.arch}`,
      SUNDECK_BYTECODE: "0",
      SUNDECK_VERSION: version,
      SUNDECK_RELEASE_DIR: dir,
    },
  });
  if (r.code !== 0) throw new Error(`release build failed: ${r.stderr}${r.stdout}`);
}

/** The release file name for this machine (glibc). */
export const TARGET = `sundeck-linux-${process.arch}`;

/** sha256 hex of a file. */
export function sha256(path: string): string {
  return new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");
}

/** Write SHA256SUMS over `names` in `dir`. */
export function writeSums(dir: string, names: string[]): void {
  writeFileSync(join(dir, "SHA256SUMS"), names.map((n) => `${sha256(join(dir, n))}  ${n}\n`).join(""));
}

/** Copy a release into `dir` with its binary changed after SHA256SUMS was written. */
export function tamperedCopy(from: string, dir: string): void {
  cpSync(from, dir, { recursive: true });
  const bin = join(dir, TARGET);
  writeFileSync(bin, Buffer.concat([readFileSync(bin), Buffer.from("\n#evil\n")]));
}

/** A static file server over `root`; `requests` lists the paths asked for. */
export function serveDir(root: string): { url: string; requests: string[]; stop(): void } {
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = decodeURIComponent(new URL(req.url).pathname);
      requests.push(path);
      if (path.includes("..")) return new Response("Bad Request", { status: 400 });
      const file = Bun.file(join(root, path));
      return file.size > 0 ? new Response(file) : new Response("Not Found", { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
}

/** A throwaway machine: every path install.sh touches lives under `root`; systemctl is a script logging its calls. */
export interface FakeHost {
  root: string;
  bin: string;
  config: string;
  unit: string;
  dataDir: string;
  /** systemctl invocations so far, one line each. */
  systemctl(): string[];
  env: Record<string, string>;
}

export function fakeHost(opts: { systemd?: boolean } = {}): FakeHost {
  const root = tempDir("sundeck-install-");
  const tools = join(root, ".fake");
  mkdirSync(join(tools, "run"), { recursive: true });
  const log = join(tools, "systemctl.log");
  writeFileSync(join(tools, "systemctl"), `#!/bin/sh\necho "$*" >> "${log}"\n`);
  chmodSync(join(tools, "systemctl"), 0o755);
  writeFileSync(log, "");
  return {
    root,
    bin: join(root, "usr/local/bin/sundeck"),
    config: join(root, "etc/sundeck/config.yaml"),
    unit: join(root, "etc/systemd/system/sundeck.service"),
    dataDir: join(root, "var/lib/sundeck"),
    systemctl: () => readFileSync(log, "utf8").split("\n").filter(Boolean),
    env: {
      SUNDECK_INSTALL_ROOT: root,
      SUNDECK_SYSTEMCTL: join(tools, "systemctl"),
      SUNDECK_SYSTEMD_RUNDIR: opts.systemd === false ? join(tools, "no-systemd") : join(tools, "run"),
      SUNDECK_SERVICE_USER: "root",
    },
  };
}

/** Run an installer script (sh) on a fake host. */
export function runInstaller(script: string, host: FakeHost, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return exec(["sh", script, ...args], { env: { ...host.env, ...env } });
}
