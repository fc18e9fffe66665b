/** Doctor checks of the Docker side: the engine and its API version, compose, the socket's permissions, the Docker root. */
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { composeBaseEnv, parseVersion } from "../../docker/compose";
import { createRunner } from "../../docker/runner";
import { EngineTransport, engineTarget } from "../../docker/transport";
import { type CheckResult, fail, ok, oneLine, PROBE_TIMEOUT_MS, warn } from "./check";

/** The oldest engine API Sundeck is written against (src/docker/transport.ts prefers 1.41). */
const MIN_API = [1, 41];

/** What the engine told about itself; null fields when it did not answer. */
export interface EngineFacts {
  version: string | null;
  apiVersion: string | null;
  rootDir: string | null;
  error: string | null;
}

/** Ask the engine for its version and Docker root (one deadline for both). */
export async function engineFacts(env: Record<string, string | undefined>): Promise<EngineFacts> {
  const http = new EngineTransport(engineTarget(undefined, env), undefined, PROBE_TIMEOUT_MS);
  try {
    const v = await http.json("GET", "/version", { unversioned: true });
    const info = await http.json("GET", "/info").catch(() => null);
    return {
      version: String(v?.Version ?? "?"),
      apiVersion: String(v?.ApiVersion ?? "?"),
      rootDir: typeof info?.DockerRootDir === "string" ? info.DockerRootDir : null,
      error: null,
    };
  } catch (e) {
    return { version: null, apiVersion: null, rootDir: null, error: oneLine(e) };
  }
}

export function engineCheck(f: EngineFacts): CheckResult {
  const name = "docker engine";
  if (f.error) return fail(name, f.error);
  const [major, minor] = (f.apiVersion ?? "").split(".").map(Number);
  if (major < MIN_API[0] || (major === MIN_API[0] && minor < MIN_API[1])) {
    return warn(name, `engine ${f.version}, API ${f.apiVersion}: older than ${MIN_API.join(".")}, upgrade Docker`);
  }
  return ok(name, `engine ${f.version}, API ${f.apiVersion}`);
}

/** Compose probes get a little longer than the others: Debian's docker-compose (Python) starts slowly on a busy host. */
const COMPOSE_TIMEOUT_MS = 4000;

/** `docker compose` (v2) or `docker-compose` (v1), both asked at once; a probe that times out is not proof of absence. */
export async function composeCheck(env: Record<string, string | undefined>): Promise<CheckResult> {
  const name = "docker compose";
  const runner = createRunner();
  const ask = (argv: string[]) => runner.run(argv, { env: composeBaseEnv(env), timeoutMs: COMPOSE_TIMEOUT_MS });
  const [v2, v1] = await Promise.all([ask(["docker", "compose", "version"]), ask(["docker-compose", "version"])]);
  const v2Version = v2.code === 0 ? parseVersion(v2.output) : null;
  if (v2Version) return ok(name, `v2 plugin, version ${v2Version}`);
  const v1Version = v1.code === 0 ? parseVersion(v1.output) : null;
  if (v1Version) return ok(name, `v1 (docker-compose), version ${v1Version}; the v2 plugin is preferred`);
  if (v2.killed || v1.killed)
    return warn(name, `no answer within ${COMPOSE_TIMEOUT_MS / 1000}s from docker compose / docker-compose`);
  return fail(name, "neither `docker compose` (v2 plugin) nor `docker-compose` (v1) runs: install the compose plugin");
}

/** Whether this user may connect to the engine's unix socket, and through which group. */
export function socketCheck(env: Record<string, string | undefined>): CheckResult {
  const name = "docker socket";
  const target = engineTarget(undefined, env);
  if (!target.socketPath) return warn(name, `DOCKER_HOST is ${target.where}: a TCP engine, no socket permissions to check`);
  const path = target.socketPath;
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return fail(name, `no socket at ${path}: is dockerd running?`);
  }
  if (!st.isSocket()) return fail(name, `${path} is not a socket`);
  const group = groupName(st.gid);
  const mode = (st.mode & 0o777).toString(8).padStart(4, "0");
  const owner = `${st.uid === 0 ? "root" : st.uid}:${group} ${mode}`;
  const uid = process.getuid?.() ?? -1;
  try {
    accessSync(path, constants.R_OK | constants.W_OK);
  } catch {
    return fail(name, `${path} (${owner}) refuses uid ${uid}: run as root or add the user to group ${group}`);
  }
  const how = uid === 0 ? "as root" : uid === st.uid ? "as its owner" : `through group ${group}`;
  return ok(name, `${path} (${owner}) usable ${how}; whoever uses it is root-equivalent on this host`);
}

/** The name of a group id from /etc/group, else the number. */
function groupName(gid: number): string {
  try {
    const line = readFileSync("/etc/group", "utf8")
      .split("\n")
      .find((l) => l.split(":")[2] === String(gid));
    if (line) return line.split(":")[0];
  } catch {
    // no /etc/group (a minimal image): the number says it
  }
  return String(gid);
}
