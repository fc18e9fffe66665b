/**
 * HTTP to the Docker engine over its unix socket: API version negotiation, the 10 s deadline on plain calls, and the
 * mapping of socket failures to DockerUnavailable and of error statuses to EngineError.
 */
import { DockerUnavailable, EngineError } from "./types";

/** The API version Sundeck is written against; newer engines that refuse it are met at their minimum. */
export const PREFERRED_API_VERSION = "1.41";
const DEFAULT_SOCKET = "/var/run/docker.sock";
const CALL_TIMEOUT_MS = 10_000;

/** Where the engine listens: DOCKER_HOST (`unix://` or `tcp://`), else the default socket. */
export interface EngineTarget {
  /** Unix socket path, or null for TCP. */
  socketPath: string | null;
  /** Base URL requests are made against. */
  baseUrl: string;
  /** How the engine is named in messages. */
  where: string;
}

/** Resolve the engine address from an explicit socket path or the environment. */
export function engineTarget(socketPath?: string, env: Record<string, string | undefined> = process.env): EngineTarget {
  if (socketPath) return { socketPath, baseUrl: "http://localhost", where: socketPath };
  const host = env.DOCKER_HOST?.trim();
  if (host?.startsWith("unix://")) {
    const p = host.slice("unix://".length) || DEFAULT_SOCKET;
    return { socketPath: p, baseUrl: "http://localhost", where: p };
  }
  if (host?.startsWith("tcp://") || host?.startsWith("http://")) {
    const url = `http://${host.replace(/^(tcp|http):\/\//, "").replace(/\/+$/, "")}`;
    return { socketPath: null, baseUrl: url, where: url };
  }
  return { socketPath: DEFAULT_SOCKET, baseUrl: "http://localhost", where: DEFAULT_SOCKET };
}

export interface CallOptions {
  query?: Record<string, string | number | boolean | undefined | Record<string, string[]>>;
  body?: unknown;
  signal?: AbortSignal;
  /** Leave out the /v1.xx prefix (ping, version). */
  unversioned?: boolean;
}

/** Requests to one engine. */
export class EngineTransport {
  private negotiated: Promise<string> | null = null;

  constructor(
    readonly target: EngineTarget,
    private readonly fixedVersion?: string,
    private readonly timeoutMs = CALL_TIMEOUT_MS,
  ) {}

  /** A call whose whole answer is read within the deadline; non-2xx throws EngineError. */
  async json<T = any>(method: string, path: string, o: CallOptions = {}): Promise<T> {
    const text = await this.text(method, path, o);
    return (text ? JSON.parse(text) : null) as T;
  }

  /** As json(), the body as text. */
  async text(method: string, path: string, o: CallOptions = {}): Promise<string> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const signal = o.signal ? AbortSignal.any([deadline, o.signal]) : deadline;
    try {
      const res = await this.send(method, path, o, signal, true);
      if (!res.ok) throw await engineError(res, method, path);
      return await res.text();
    } catch (e) {
      if (deadline.aborted && !o.signal?.aborted) {
        throw new DockerUnavailable(`docker engine at ${this.target.where} did not answer within ${this.timeoutMs / 1000}s`);
      }
      throw e;
    }
  }

  /**
   * A streaming call: the deadline covers only the response headers, and Bun's idle timeout is off so a quiet
   * follow or event stream stays open. The caller reads (and cancels) the body.
   */
  async stream(method: string, path: string, o: CallOptions = {}): Promise<Response> {
    const headers = new AbortController();
    const timer = setTimeout(() => headers.abort(), this.timeoutMs);
    const signal = o.signal ? AbortSignal.any([headers.signal, o.signal]) : headers.signal;
    try {
      const res = await this.send(method, path, o, signal, false);
      if (!res.ok) throw await engineError(res, method, path);
      return res;
    } catch (e) {
      if (headers.signal.aborted && !o.signal?.aborted) {
        throw new DockerUnavailable(`docker engine at ${this.target.where} did not answer within ${this.timeoutMs / 1000}s`);
      }
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The API version prefix in use, negotiated once with the engine unless fixed. */
  apiVersion(): Promise<string> {
    if (this.fixedVersion) return Promise.resolve(this.fixedVersion);
    if (!this.negotiated) {
      const p = this.json("GET", "/version", { unversioned: true }).then((v) =>
        negotiate(PREFERRED_API_VERSION, v?.ApiVersion, v?.MinAPIVersion),
      );
      // a failure (engine down) is not remembered: the next call asks again
      p.catch(() => {
        if (this.negotiated === p) this.negotiated = null;
      });
      this.negotiated = p;
    }
    return this.negotiated;
  }

  private async send(method: string, path: string, o: CallOptions, signal: AbortSignal, idle: boolean): Promise<Response> {
    const prefix = o.unversioned ? "" : `/v${await this.apiVersion()}`;
    const url = `${this.target.baseUrl}${prefix}${path}${queryString(o.query)}`;
    const init: RequestInit & { unix?: string; timeout?: boolean } = { method, signal };
    if (this.target.socketPath) init.unix = this.target.socketPath;
    if (!idle) init.timeout = false;
    if (o.body !== undefined) {
      init.body = JSON.stringify(o.body);
      init.headers = { "content-type": "application/json" };
    }
    try {
      return await fetch(url, init);
    } catch (e) {
      throw this.connectionError(e, signal);
    }
  }

  /** Socket-level failures become DockerUnavailable; aborts pass through untouched. */
  connectionError(e: unknown, signal?: AbortSignal): unknown {
    if (signal?.aborted || (e as Error)?.name === "AbortError" || e instanceof DockerUnavailable) return e;
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code === "EACCES" || code === "EPERM") {
      return new DockerUnavailable(
        `docker engine at ${this.target.where} refused access (permission denied): run as root or in the docker group`,
      );
    }
    return new DockerUnavailable(`docker engine not reachable at ${this.target.where}: is dockerd running?`);
  }
}

/** min(preferred, engine max), raised to the engine's minimum when it no longer accepts the preferred version. */
export function negotiate(preferred: string, engineMax?: string, engineMin?: string): string {
  let v = preferred;
  if (engineMax && compareVersions(engineMax, v) < 0) v = engineMax;
  if (engineMin && compareVersions(engineMin, v) > 0) v = engineMin;
  return v;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function queryString(q?: CallOptions["query"]): string {
  if (!q) return "";
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    if (typeof v === "object") params.set(k, JSON.stringify(v));
    else params.set(k, typeof v === "boolean" ? (v ? "1" : "0") : String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}

async function engineError(res: Response, method: string, path: string): Promise<EngineError> {
  let message = "";
  try {
    const text = await res.text();
    try {
      message = JSON.parse(text)?.message ?? text;
    } catch {
      message = text;
    }
  } catch {
    // the body is lost; the status still says enough
  }
  message = message.trim() || `${method} ${path.split("?")[0]} answered ${res.status}`;
  return new EngineError(res.status, message);
}
