/**
 * Docker side of the deploy benchmark: raw Engine API calls over the socket (none of Sundeck's code, so the bare
 * baseline owes nothing to it), the readiness rule Sundeck applies, the bare `docker-compose` run, and cleanup.
 */

const PROJECT_LABEL = "com.docker.compose.project";
const API_VERSION = "1.41";
const CALL_TIMEOUT_MS = 10_000;

/** The engine's unix socket: DOCKER_HOST (`unix://`) or the default. */
export const SOCKET = process.env.DOCKER_HOST?.startsWith("unix://")
  ? process.env.DOCKER_HOST.slice("unix://".length)
  : "/var/run/docker.sock";

/** One Engine API call; non-2xx throws with the engine's message. */
export async function api<T = any>(method: string, path: string, timeoutMs = CALL_TIMEOUT_MS): Promise<T> {
  const url = `http://localhost${path.startsWith("/_ping") ? "" : `/v${API_VERSION}`}${path}`;
  const res = await fetch(url, { method, unix: SOCKET, signal: AbortSignal.timeout(timeoutMs) } as RequestInit);
  const text = await res.text();
  if (!res.ok) throw new Error(`engine ${method} ${path}: ${res.status} ${text.trim().slice(0, 200)}`);
  return (text && res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text) as T;
}

const q = (filters: Record<string, string[]>) => encodeURIComponent(JSON.stringify(filters));

/** A container as `GET /containers/json` lists it. */
export interface RawContainer {
  Id: string;
  State: string;
  Status: string;
  Labels: Record<string, string>;
  Health?: { Status?: string };
}

/** Containers of one compose project, every state. */
export function projectContainers(project: string): Promise<RawContainer[]> {
  return api<RawContainer[]>("GET", `/containers/json?all=1&filters=${q({ label: [`${PROJECT_LABEL}=${project}`] })}`);
}

/** Health as Sundeck reads it: the Health field of newer engines, else the "(health: starting)" part of Status. */
function health(c: RawContainer): string | null {
  const h = c.Health?.Status;
  if (h && h !== "none") return h;
  const m = /\((healthy|unhealthy|health: starting)\)/.exec(c.Status ?? "");
  return m ? (m[1] === "health: starting" ? "starting" : m[1]) : null;
}

/**
 * Sundeck's readiness rule (stabilize.ts), without the settle period: every service has a container, every container
 * runs, and none is still starting its healthcheck. An unhealthy, restarting or exited container is a failure (the
 * benchmark file has no one-shot services).
 */
export function judge(containers: RawContainer[], services: readonly string[]): { ready: boolean; problem: string | null } {
  for (const c of containers) {
    const svc = c.Labels["com.docker.compose.service"] ?? c.Id.slice(0, 12);
    if (health(c) === "unhealthy") return { ready: false, problem: `service ${svc} is unhealthy` };
    if (c.State === "restarting") return { ready: false, problem: `service ${svc} keeps restarting` };
    if (c.State === "exited" || c.State === "dead") return { ready: false, problem: `service ${svc} ${c.Status}` };
  }
  for (const svc of services) {
    const mine = containers.filter((c) => c.Labels["com.docker.compose.service"] === svc);
    if (mine.length === 0) return { ready: false, problem: null };
    if (mine.some((c) => c.State !== "running" || health(c) === "starting")) return { ready: false, problem: null };
  }
  return { ready: true, problem: null };
}

/**
 * Polls a project every `pollMs` from the moment it is made (both sides start one at t0, so the engine carries the
 * same extra load in both) and tells when it was first seen ready at or after a given time.
 */
export class ReadyWatch {
  private stopped = false;
  private readonly seen: { at: number; ready: boolean }[] = [];
  private problem: string | null = null;
  private error: Error | null = null;
  private wake: (() => void) | null = null;
  readonly polls = { count: 0, ms: 0 };

  constructor(
    private readonly project: string,
    private readonly services: readonly string[],
    private readonly pollMs: number,
  ) {
    void this.loop();
  }

  private async loop() {
    while (!this.stopped) {
      try {
        const t = performance.now();
        const verdict = judge(await projectContainers(this.project), this.services);
        const at = performance.now();
        this.polls.count++;
        this.polls.ms += at - t;
        this.seen.push({ at, ready: verdict.ready });
        if (verdict.problem) this.problem = verdict.problem;
      } catch (e) {
        this.error = e as Error;
      }
      this.wake?.();
      await Bun.sleep(this.pollMs);
    }
  }

  /** The first moment (performance.now) the project was seen ready at or after `after`; throws on a failure. */
  async readyAfter(after: number, timeoutMs: number): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const hit = this.seen.find((s) => s.ready && s.at >= after);
      if (hit) return hit.at;
      if (this.problem) throw new Error(`${this.project}: ${this.problem}`);
      if (this.error) throw new Error(`${this.project}: polling the engine failed: ${this.error.message}`);
      if (performance.now() > deadline) throw new Error(`${this.project}: not ready after ${timeoutMs / 1000}s`);
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 100);
      });
    }
  }

  stop() {
    this.stopped = true;
  }
}

/** What a bare compose run took, in ms from the spawn. */
export interface ComposeRun {
  code: number;
  /** First complete output line (stdout or stderr). */
  firstLine: number;
  exit: number;
  output: string;
}

/** Run `docker-compose <args>` in `cwd` as a user would (their environment), timing the first output line and the exit. */
export async function compose(args: string[], cwd: string, timeoutMs: number): Promise<ComposeRun> {
  const t0 = performance.now();
  const proc = Bun.spawn(["docker-compose", ...args], { cwd, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  let firstLine = Number.NaN;
  let output = "";
  const read = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) {
      const text = dec.decode(chunk, { stream: true });
      if (Number.isNaN(firstLine) && text.includes("\n")) firstLine = performance.now() - t0;
      output += text;
    }
  };
  const reading = Promise.all([read(proc.stdout), read(proc.stderr)]);
  const code = await proc.exited;
  const exit = performance.now() - t0;
  clearTimeout(timer);
  await reading;
  if (proc.signalCode === "SIGKILL") output += `\nkilled after ${timeoutMs / 1000}s`;
  return { code, firstLine, exit, output: output.trim() };
}

/** Names of the projects the benchmark owns. */
export const ownedProject = (name: string) => name === "bench-bare" || name.startsWith("sundeck-bench-");

/**
 * Remove every container, network and volume of the benchmark's projects (found by label). Passes repeat while
 * they find something; returns how many objects were removed.
 */
export async function removeOwned(): Promise<number> {
  let total = 0;
  for (let pass = 0; pass < 3; pass++) {
    const filters = q({ label: [PROJECT_LABEL] });
    const mine = <T extends { Labels?: Record<string, string> | null }>(list: T[]) =>
      list.filter((o) => ownedProject(o.Labels?.[PROJECT_LABEL] ?? ""));
    const containers = mine(await api<RawContainer[]>("GET", `/containers/json?all=1&filters=${filters}`));
    await Promise.all(containers.map((c) => api("DELETE", `/containers/${c.Id}?force=1&v=1`).catch(() => {})));
    const networks = mine(await api<{ Id: string; Labels: Record<string, string> }[]>("GET", `/networks?filters=${filters}`));
    await Promise.all(networks.map((n) => api("DELETE", `/networks/${n.Id}`).catch(() => {})));
    const vols = mine(
      (await api<{ Volumes: { Name: string; Labels: Record<string, string> }[] | null }>("GET", `/volumes?filters=${filters}`))
        .Volumes ?? [],
    );
    await Promise.all(vols.map((v) => api("DELETE", `/volumes/${encodeURIComponent(v.Name)}`).catch(() => {})));
    const found = containers.length + networks.length + vols.length;
    total += found;
    if (found === 0) break;
  }
  return total;
}

/** What of the benchmark's projects exists now (containers and networks), as a short text; empty when nothing. */
export async function ownedLeftovers(): Promise<string> {
  const filters = q({ label: [PROJECT_LABEL] });
  const containers = (await api<RawContainer[]>("GET", `/containers/json?all=1&filters=${filters}`)).filter((c) =>
    ownedProject(c.Labels[PROJECT_LABEL] ?? ""),
  );
  const networks = (await api<{ Name: string; Labels: Record<string, string> }[]>("GET", `/networks?filters=${filters}`)).filter(
    (n) => ownedProject(n.Labels?.[PROJECT_LABEL] ?? ""),
  );
  const parts = [
    containers.length ? `${containers.length} container(s)` : "",
    networks.length ? `networks ${networks.map((n) => n.Name).join(", ")}` : "",
  ];
  return parts.filter(Boolean).join("; ");
}

/** Engine, compose and image checks with an error that says what to do. Returns the versions for the report. */
export async function checkDocker(images: readonly string[]): Promise<{ engine: string; storage: string; compose: string }> {
  let version: { Version: string; ApiVersion: string; KernelVersion?: string };
  try {
    version = await api("GET", "/version", 5000);
  } catch (e) {
    throw new Error(`docker engine not reachable at ${SOCKET} (${(e as Error).message}): start dockerd first`);
  }
  const info = await api<{ Driver?: string }>("GET", "/info").catch(() => ({ Driver: "?" }));
  for (const ref of images) {
    try {
      await api("GET", `/images/${encodeURIComponent(ref)}/json`);
    } catch {
      throw new Error(`image ${ref} is missing (no registry is reachable): build it with \`bun scripts/test-images.ts\``);
    }
  }
  let composeVersion = "";
  try {
    const p = Bun.spawnSync(["docker-compose", "version", "--short"], { stdout: "pipe", stderr: "pipe" });
    if (p.exitCode === 0) composeVersion = p.stdout.toString().trim();
  } catch {
    // not installed: reported below
  }
  if (!composeVersion) throw new Error("`docker-compose` (v1) is not installed or does not run: the bare side needs it");
  return { engine: `${version.Version} (API ${version.ApiVersion})`, storage: info.Driver ?? "?", compose: composeVersion };
}

/** `n` distinct TCP ports free on every interface right now. */
export function freePorts(n: number): number[] {
  const ports: number[] = [];
  const held: { stop(): void }[] = [];
  try {
    while (ports.length < n) {
      const l = Bun.listen({ hostname: "0.0.0.0", port: 0, socket: { data() {} } });
      held.push(l);
      ports.push(l.port);
    }
  } finally {
    for (const l of held) l.stop();
  }
  return ports;
}
