/**
 * The Engine API client: container state, logs and events read from the Docker socket (never parsed from compose
 * output), image presence, and the shared networks Sundeck creates.
 */
import { getArchive, putArchive } from "./archive";
import { execIn } from "./exec";
import { JsonLines, LogDecoder } from "./streams";
import { type EngineTarget, EngineTransport, engineTarget } from "./transport";
import { type ContainerSummary, type DockerEvent, DockerUnavailable, type Engine, EngineError, type LogLine } from "./types";

export interface EngineOptions {
  /** Unix socket of the engine; default from DOCKER_HOST (`unix://...`) or /var/run/docker.sock. */
  socketPath?: string;
  /** Fixed API version ("1.41"); negotiated with the engine when omitted. */
  apiVersion?: string;
  /** Where DOCKER_HOST is read from (the process environment by default). */
  env?: Record<string, string | undefined>;
  /** Deadline of non-streaming calls, ms (10 s). */
  timeoutMs?: number;
}

/** The engine address a client built with these options talks to. */
export function resolveEngineTarget(opts: EngineOptions = {}): EngineTarget {
  return engineTarget(opts.socketPath, opts.env);
}

/** An Engine over the unix socket. Construction does no I/O: a missing engine surfaces on first use. */
export function createEngine(opts: EngineOptions = {}): Engine {
  const http = new EngineTransport(resolveEngineTarget(opts), opts.apiVersion, opts.timeoutMs);
  const creating = new Map<string, Promise<void>>();

  const engine: Engine = {
    async ping() {
      try {
        return (await http.text("GET", "/_ping", { unversioned: true })) === "OK";
      } catch {
        return false;
      }
    },

    async version() {
      const v = await http.json("GET", "/version", { unversioned: true });
      return { version: String(v.Version ?? ""), apiVersion: String(v.ApiVersion ?? "") };
    },

    async containers(filter = {}) {
      const label = [...(filter.labels ?? [])];
      if (filter.project) label.push(`com.docker.compose.project=${filter.project}`);
      const list = await http.json<any[]>("GET", "/containers/json", {
        query: { all: true, filters: label.length ? { label } : undefined },
      });
      return (list ?? []).map(toSummary);
    },

    inspect: (id) => http.json("GET", `/containers/${encodeURIComponent(id)}/json`),

    // one-shot: the engine answers with one reading at once instead of waiting a second for a second one
    stats: (id) =>
      http.json("GET", `/containers/${encodeURIComponent(id)}/stats`, { query: { stream: false, "one-shot": true } }),

    info: () => http.json("GET", "/info"),

    logs: (id, o) => logs(http, engine, id, o),

    events: (o) => events(http, o),

    async imageExists(ref) {
      try {
        await http.json("GET", `/images/${encodeURIComponent(ref)}/json`);
        return true;
      } catch (e) {
        // 400: a reference that cannot be valid names no local image either
        if (e instanceof EngineError && (e.status === 404 || e.status === 400)) return false;
        throw e;
      }
    },

    async imageId(ref) {
      try {
        return ((await http.json("GET", `/images/${encodeURIComponent(ref)}/json`)) as { Id?: string }).Id ?? null;
      } catch (e) {
        if (e instanceof EngineError && (e.status === 404 || e.status === 400)) return null;
        throw e;
      }
    },

    stop: (id, timeoutS) => lifecycle(http, id, "stop", timeoutS),

    start: (id) => lifecycle(http, id, "start"),

    exec: (id, o) => execIn(http, id, o),

    getArchive: (id, path, signal) => getArchive(http, id, path, signal),

    putArchive: (id, path, tar, signal) => putArchive(http, id, path, tar, signal),

    async networks(filter) {
      const query = filter.labels.length ? { filters: { label: filter.labels } } : undefined;
      const list = await http.json<any[]>("GET", "/networks", { query });
      return (list ?? []).map((n) => ({
        id: String(n.Id),
        name: String(n.Name ?? ""),
        labels: n.Labels ?? {},
        subnets: (Array.isArray(n.IPAM?.Config) ? n.IPAM.Config : [])
          .map((c: any) => (typeof c?.Subnet === "string" ? c.Subnet : ""))
          .filter(Boolean),
      }));
    },

    removeNetwork: (id) => gone(http.text("DELETE", `/networks/${encodeURIComponent(id)}`)),

    async volumes(filter) {
      const r = await http.json<any>("GET", "/volumes", { query: { filters: { label: filter.labels } } });
      return (r?.Volumes ?? []).map((v: any) => ({ name: String(v.Name), labels: v.Labels ?? {} }));
    },

    removeVolume: (name) => gone(http.text("DELETE", `/volumes/${encodeURIComponent(name)}`)),

    removeContainer: (id, o = {}) =>
      gone(
        http.text("DELETE", `/containers/${encodeURIComponent(id)}`, {
          query: { force: Boolean(o.force), v: Boolean(o.volumes) },
        }),
      ),

    ensureNetwork(name) {
      // one create per name at a time in this process; other processes are handled in createNetwork
      let p = creating.get(name);
      if (!p) {
        p = ensureNetworkOnce(http, name).finally(() => creating.delete(name));
        creating.set(name, p);
      }
      return p;
    },
  };
  return engine;
}

/**
 * `POST /containers/{id}/stop?t=` or `/start`; 304 (already in that state) is success. A stop waits up to `t` seconds
 * for the container to exit before the engine kills it (without `timeoutS`, the container's own StopTimeout: compose's
 * `stop_grace_period`, 10 s by default), so its deadline is that plus 10 s, not the 10 s of other calls.
 */
async function lifecycle(http: EngineTransport, id: string, action: "stop" | "start", timeoutS?: number): Promise<void> {
  const path = `/containers/${encodeURIComponent(id)}/${action}`;
  try {
    if (action === "start") {
      await http.text("POST", path);
      return;
    }
    const own = timeoutS ?? (await http.json("GET", `/containers/${encodeURIComponent(id)}/json`))?.Config?.StopTimeout;
    const t = Math.max(0, Math.ceil(typeof own === "number" ? own : 10));
    // a transport with the longer deadline, on the version already negotiated
    const slow = new EngineTransport(http.target, await http.apiVersion(), (t + 10) * 1000);
    await slow.text("POST", path, { query: { t } });
  } catch (e) {
    if (!(e instanceof EngineError && e.status === 304)) throw e;
  }
}

/** A removal whose object is already gone (404) succeeded. */
async function gone(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof EngineError && e.status === 404)) throw e;
  }
}

/** Health from the summary: newer engines send Health, older ones only the status text. */
export function healthOf(c: { Health?: { Status?: string }; Status?: string }): string | null {
  const h = c.Health?.Status;
  if (h && h !== "none") return h;
  const m = /\((healthy|unhealthy|health: starting)\)/.exec(c.Status ?? "");
  if (!m) return null;
  return m[1] === "health: starting" ? "starting" : m[1];
}

function toSummary(c: any): ContainerSummary {
  const labels: Record<string, string> = c.Labels ?? {};
  const num = labels["com.docker.compose.container-number"];
  const networks: Record<string, string> = {};
  for (const [net, v] of Object.entries<any>(c.NetworkSettings?.Networks ?? {})) networks[net] = v?.IPAddress ?? "";
  return {
    id: c.Id,
    name: String(c.Names?.[0] ?? "").replace(/^\//, ""),
    image: c.Image ?? "",
    state: c.State ?? "",
    status: c.Status ?? "",
    health: healthOf(c),
    labels,
    service: labels["com.docker.compose.service"] ?? null,
    project: labels["com.docker.compose.project"] ?? null,
    number: num !== undefined && /^\d+$/.test(num) ? Number(num) : null,
    networks,
    ports: (c.Ports ?? []).map((p: any) => ({
      privatePort: p.PrivatePort,
      ...(p.PublicPort ? { publicPort: p.PublicPort } : {}),
      ...(p.IP ? { ip: p.IP } : {}),
      type: p.Type ?? "tcp",
    })),
    createdAt: c.Created ?? 0,
  };
}

async function* logs(
  http: EngineTransport,
  engine: Engine,
  id: string,
  o: { tail?: number; since?: number; follow?: boolean; signal?: AbortSignal },
): AsyncGenerator<LogLine> {
  if (o.signal?.aborted) return;
  const info = await engine.inspect(id);
  const decoder = new LogDecoder(Boolean(info?.Config?.Tty));
  const query = {
    stdout: true,
    stderr: true,
    timestamps: true,
    follow: Boolean(o.follow),
    tail: o.tail === undefined ? "all" : Math.max(0, Math.floor(o.tail)),
    since: o.since === undefined ? undefined : unixSeconds(o.since),
  };
  let res: Response;
  try {
    res = await http.stream("GET", `/containers/${encodeURIComponent(id)}/logs`, { query, signal: o.signal });
  } catch (e) {
    if (o.signal?.aborted) return;
    throw e;
  }
  for await (const chunk of body(http, res, o.signal)) yield* decoder.push(chunk);
  if (!o.signal?.aborted) yield* decoder.end();
}

async function* events(
  http: EngineTransport,
  o: { filters?: Record<string, string[]>; signal?: AbortSignal; since?: number },
): AsyncGenerator<DockerEvent> {
  if (o.signal?.aborted) return;
  const query = {
    filters: o.filters && Object.keys(o.filters).length ? o.filters : undefined,
    since: o.since === undefined ? undefined : unixSeconds(o.since),
  };
  let res: Response;
  try {
    res = await http.stream("GET", "/events", { query, signal: o.signal });
  } catch (e) {
    if (o.signal?.aborted) return;
    throw e;
  }
  const decoder = new JsonLines();
  for await (const chunk of body(http, res, o.signal)) for (const ev of decoder.push(chunk)) yield toEvent(ev);
  if (o.signal?.aborted) return;
  for (const ev of decoder.end()) yield toEvent(ev);
  throw new DockerUnavailable(`docker engine at ${http.target.where} closed the event stream`);
}

/** The chunks of a streaming body; ends quietly on abort, releases the connection when the consumer stops early. */
async function* body(http: EngineTransport, res: Response, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  if (!res.body) return;
  const reader = res.body.getReader();
  const onAbort = () => reader.cancel().catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      let r: Awaited<ReturnType<typeof reader.read>>;
      try {
        r = await reader.read();
      } catch (e) {
        if (signal?.aborted) return;
        throw http.connectionError(e);
      }
      if (r.done || signal?.aborted) return;
      yield r.value;
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    reader.cancel().catch(() => {});
  }
}

function toEvent(e: any): DockerEvent {
  return {
    type: e.Type ?? e.type ?? "",
    action: e.Action ?? e.status ?? "",
    id: e.Actor?.ID ?? e.id ?? "",
    attributes: e.Actor?.Attributes ?? {},
    time: e.timeNano ? e.timeNano / 1e9 : (e.time ?? 0),
  };
}

/** Docker's `since` format: seconds, optionally with up to 9 fractional digits. */
function unixSeconds(s: number): string {
  const whole = Math.floor(s);
  const nanos = Math.round((s - whole) * 1e9);
  return nanos > 0 ? `${whole}.${String(Math.min(nanos, 999_999_999)).padStart(9, "0")}` : String(whole);
}

/** Marks networks Sundeck created. */
const MANAGED_LABEL = "io.sundeck.managed";

/** Create the bridge network unless it exists; racing creators (other processes included) converge on one. */
async function ensureNetworkOnce(http: EngineTransport, name: string): Promise<void> {
  if ((await networksNamed(http, name)).length > 0) return;
  let created: string | null = null;
  try {
    const r = await http.json("POST", "/networks/create", {
      body: { Name: name, Driver: "bridge", CheckDuplicate: true, Labels: { [MANAGED_LABEL]: "true" } },
    });
    created = r?.Id ?? null;
  } catch (e) {
    if (e instanceof EngineError && e.status === 409) return;
    throw e;
  }
  // Engine 20.10 lets concurrent creates with the same name all succeed (CheckDuplicate is best effort): every creator
  // keeps the oldest and removes the other fresh copies Sundeck made, so callers never see an ambiguous name.
  const same = await networksNamed(http, name);
  if (!created || same.length < 2) return;
  const [winner, ...losers] = [...same].sort((a, b) => compareCreated(a, b));
  for (const n of losers) {
    if (n.Id === winner.Id || n.Labels?.[MANAGED_LABEL] !== "true") continue;
    await http.json("DELETE", `/networks/${encodeURIComponent(n.Id)}`).catch(() => {});
  }
}

async function networksNamed(http: EngineTransport, name: string): Promise<any[]> {
  // the name filter matches substrings: keep exact names only
  const list = await http.json<any[]>("GET", "/networks", { query: { filters: { name: [name] } } });
  return (list ?? []).filter((n) => n.Name === name);
}

function compareCreated(a: any, b: any): number {
  const d = createdNanos(a.Created) - createdNanos(b.Created);
  if (d !== 0n) return d < 0n ? -1 : 1;
  return String(a.Id) < String(b.Id) ? -1 : 1;
}

/** RFC 3339 with up to 9 fractional digits, exactly (Date keeps only milliseconds). */
function createdNanos(s: unknown): bigint {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(.*)$/.exec(String(s ?? ""));
  if (!m) return 0n;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return 0n;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? "").padEnd(9, "0") || "0");
}
