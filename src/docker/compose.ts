/**
 * The compose driver: `docker compose` (v2) or Debian's `docker-compose` (v1), detected once at start. Every call names
 * the project, file and directory explicitly and runs with a minimal environment, so nothing of the server leaks in.
 */
import { minimalEnv } from "./runner";
import type { CommandRunner, ComposeCallOptions, ComposeDriver, ProjectRef, RunResult } from "./types";

/** Where compose's base environment comes from (the server's own environment by default). */
export interface ComposeEnvSource {
  env?: Record<string, string | undefined>;
}

/** Detection may not hang the server's start. */
const DETECT_TIMEOUT_MS = 15_000;

/**
 * Find a working compose: `docker compose version` (v2) first, then `docker-compose version` (v1).
 * Null when neither runs.
 */
export async function detectCompose(
  runner: CommandRunner,
  env: Record<string, string | undefined> = process.env,
): Promise<ComposeDriver | null> {
  const base = composeBaseEnv(env);
  const v2 = await runner.run(["docker", "compose", "version"], { env: base, timeoutMs: DETECT_TIMEOUT_MS });
  const v2Version = v2.code === 0 ? parseVersion(v2.output) : null;
  if (v2Version) return createComposeDriver(runner, "v2", v2Version, { env });
  const v1 = await runner.run(["docker-compose", "version"], { env: base, timeoutMs: DETECT_TIMEOUT_MS });
  const v1Version = v1.code === 0 ? parseVersion(v1.output) : null;
  if (v1Version) return createComposeDriver(runner, "v1", v1Version, { env });
  return null;
}

/** The first version number compose printed ("Docker Compose version v2.27.0", "docker-compose version 1.29.2, ..."). */
export function parseVersion(output: string): string | null {
  const m = /version\s+v?(\d+\.\d+(?:\.\d+)?[\w.+-]*)/i.exec(output);
  return m ? m[1].replace(/,$/, "") : null;
}

/** What every compose process starts from: PATH, HOME, LANG, and DOCKER_HOST when the server has one. */
export function composeBaseEnv(from: Record<string, string | undefined> = process.env): Record<string, string> {
  const env = minimalEnv(from);
  if (from.DOCKER_HOST) env.DOCKER_HOST = from.DOCKER_HOST;
  return env;
}

/** A driver for the given compose flavor. */
export function createComposeDriver(
  runner: CommandRunner,
  flavor: "v2" | "v1",
  version: string,
  source: ComposeEnvSource = {},
): ComposeDriver {
  const base = composeBaseEnv(source.env ?? process.env);
  // Without a TTY neither flavor draws progress bars; these flags also drop colours. v1 before 1.28 only knows --no-ansi.
  const head = flavor === "v2" ? ["docker", "compose", "--ansi", "never"] : ["docker-compose", ...v1AnsiFlags(version)];
  const call = (p: ProjectRef, args: string[], o: ComposeCallOptions = {}): Promise<RunResult> => {
    // --env-file: compose's own settings and interpolation come from Sundeck, never from the app's .env
    const envFile = p.envFile ? ["--env-file", p.envFile] : [];
    const argv = [...head, "-p", p.name, "-f", p.file, "--project-directory", p.projectDir, ...envFile, ...args];
    const env: Record<string, string> = { ...base, ...p.env };
    if (flavor === "v2") env.COMPOSE_PROGRESS ??= "plain";
    return runner.run(argv, { cwd: p.projectDir, env, onLine: o.onLine, signal: o.signal });
  };
  return {
    flavor,
    version,
    up: (p, o = {}) => {
      const scale = Object.entries(o.scale ?? {}).flatMap(([svc, n]) => ["--scale", `${svc}=${n}`]);
      const flags = [...(o.noDeps ? ["--no-deps"] : []), ...(o.noRecreate ? ["--no-recreate"] : [])];
      return call(p, ["up", "-d", "--remove-orphans", ...flags, ...scale, ...(o.services ?? [])], o);
    },
    pull: (p, services, o) => call(p, ["pull", ...services], o),
    down: (p, o = {}) => call(p, ["down", "--remove-orphans", ...(o.volumes ? ["-v"] : [])], o),
    stop: (p, services = [], o) => call(p, ["stop", ...services], o),
    start: (p, services = [], o) => call(p, ["start", ...services], o),
    restart: (p, services = [], o) => call(p, ["restart", ...services], o),
  };
}

function v1AnsiFlags(version: string): string[] {
  const [major, minor] = version.split(".").map((n) => Number.parseInt(n, 10));
  return major === 1 && minor < 28 ? ["--no-ansi"] : ["--ansi", "never"];
}
