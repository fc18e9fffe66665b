/**
 * The remote client's HTTP side: JSON requests under `<url>/api` with the bearer key and a timeout, the server's
 * one-line error turned into a ClientError, and authenticated WebSocket streams (no Origin header, so never cross-origin).
 */
import { VERSION } from "../version";
import type { Target } from "./config";
import { ClientError } from "./errors";

/** Default time allowed for one request. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** A JSON API client bound to one server and key. */
export class Api {
  /** What GET /api/health said about the server, once asked (see notSundeck). */
  private probe: Promise<string | null> | null = null;

  constructor(
    readonly target: Target,
    private readonly timeoutMs = REQUEST_TIMEOUT_MS,
  ) {}

  /** Where the client points, for messages. */
  get where(): string {
    return this.target.context ? `${this.target.url} (context ${this.target.context})` : this.target.url;
  }

  /** `method path` with an optional JSON body; throws a ClientError with the server's line unless 2xx. */
  async request<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.send(method, path, body);
    if (!r.ok) throw await this.failure(r, path);
    return (await this.parse(r)) as T;
  }

  /** Like request, but a 404 answers null instead of failing. */
  async maybe<T = any>(method: string, path: string, body?: unknown): Promise<T | null> {
    const r = await this.send(method, path, body);
    if (r.status === 404) {
      await r.body?.cancel();
      const why = await this.notSundeck();
      if (why) throw new ClientError(why);
      return null;
    }
    if (!r.ok) throw await this.failure(r, path);
    return (await this.parse(r)) as T;
  }

  get = <T = any>(path: string) => this.request<T>("GET", path);
  post = <T = any>(path: string, body?: unknown) => this.request<T>("POST", path, body);
  put = <T = any>(path: string, body?: unknown) => this.request<T>("PUT", path, body);
  del = <T = any>(path: string) => this.request<T>("DELETE", path);

  /**
   * `method path` with a raw body (multipart, a stream), answering the Response itself so its body can be streamed:
   * the timeout covers the wait for the headers only, a redirect is returned (not followed), anything else not 2xx
   * throws like `request`.
   */
  async open(method: string, path: string, init: { body?: BodyInit; headers?: Record<string, string> } = {}): Promise<Response> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), this.timeoutMs);
    let r: Response;
    try {
      r = await fetch(`${this.target.url}/api${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.target.apiKey}`,
          "user-agent": `sundeck-cli/${VERSION}`,
          ...init.headers,
        },
        body: init.body,
        redirect: "manual",
        signal: ac.signal,
      });
    } catch (e) {
      const err = e as Error & { code?: string };
      if (err.name === "AbortError")
        throw new ClientError(`${method} ${path}: no answer from ${this.where} within ${this.timeoutMs / 1000}s`);
      const why = err.code === "ConnectionRefused" || err.code === "ECONNREFUSED" ? "connection refused" : err.message;
      throw new ClientError(`cannot reach ${this.where}: ${why}`);
    } finally {
      clearTimeout(timer);
    }
    if (r.ok || (r.status >= 300 && r.status < 400 && r.headers.has("location"))) return r;
    throw await this.failure(r, path);
  }

  /** Open a WebSocket under /api; resolves once it is open. */
  openSocket(path: string, query: Record<string, string | undefined> = {}): Promise<WebSocket> {
    const u = new URL(`${this.target.url}/api${path}`);
    u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
    for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, v);
    return new Promise((resolve, reject) => {
      let ws: WebSocket;
      try {
        ws = new WebSocket(u.toString(), {
          headers: { authorization: `Bearer ${this.target.apiKey}`, "user-agent": `sundeck-cli/${VERSION}` },
        } as any);
      } catch (e) {
        reject(new ClientError(`cannot open a stream to ${this.where}: ${(e as Error).message}`));
        return;
      }
      const fail = (why: string) => {
        cleanup();
        reject(new ClientError(`cannot open a stream to ${this.where}: ${why}`));
      };
      const onOpen = () => {
        cleanup();
        resolve(ws);
      };
      const onError = () => fail("connection failed");
      const onClose = (e: CloseEvent) => fail(`closed with ${e.code}${e.reason ? ` ${e.reason}` : ""}`);
      const timer = setTimeout(() => {
        fail(`no answer within ${this.timeoutMs / 1000}s`);
        ws.close();
      }, this.timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        ws.removeEventListener("open", onOpen);
        ws.removeEventListener("error", onError);
        ws.removeEventListener("close", onClose);
      };
      ws.addEventListener("open", onOpen);
      ws.addEventListener("error", onError);
      ws.addEventListener("close", onClose);
    });
  }

  private async send(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.target.apiKey}`,
      accept: "application/json",
      "user-agent": `sundeck-cli/${VERSION}`,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    try {
      return await fetch(`${this.target.url}/api${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: "manual",
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const err = e as Error & { code?: string };
      if (err.name === "TimeoutError" || err.name === "AbortError") {
        throw new ClientError(`${method} ${path}: no answer from ${this.where} within ${this.timeoutMs / 1000}s`);
      }
      const why = err.code === "ConnectionRefused" || err.code === "ECONNREFUSED" ? "connection refused" : err.message;
      throw new ClientError(`cannot reach ${this.where}: ${why}`);
    }
  }

  private async parse(r: Response): Promise<unknown> {
    const text = await r.text();
    if (!text) return null;
    if (!(r.headers.get("content-type") ?? "").includes("json")) return text;
    try {
      return JSON.parse(text);
    } catch {
      throw new ClientError(`${this.where} answered with malformed JSON`);
    }
  }

  /**
   * Why the server is not a Sundeck API (the proxy port, another web server), or null when it is one: asked once,
   * with GET /api/health, and only after an answer Sundeck would not give (a 404, or an error not in its format).
   */
  private notSundeck(): Promise<string | null> {
    this.probe ??= (async () => {
      let r: Response;
      try {
        r = await fetch(`${this.target.url}/api/health`, {
          headers: { accept: "application/json", "user-agent": `sundeck-cli/${VERSION}` },
          redirect: "manual",
          signal: AbortSignal.timeout(Math.min(this.timeoutMs, 5_000)),
        });
      } catch {
        return null; // unreachable now: the first failure says enough
      }
      const body = await r.text().catch(() => "");
      const type = r.headers.get("content-type") ?? "";
      if (r.ok && type.includes("json") && /"status"\s*:/.test(body)) return null;
      // the database down: still Sundeck, in its error format
      if (r.status === 503 && type.startsWith("text/plain")) return null;
      return `${this.where} does not answer as a Sundeck API (GET /api/health: ${r.status}); is this the management port (default 8443)?`;
    })();
    return this.probe;
  }

  /** The server's one-line message, with a hint where the client can help. */
  private async failure(r: Response, path = ""): Promise<ClientError> {
    const text = (await r.text().catch(() => "")).trim();
    const type = r.headers.get("content-type") ?? "";
    if (r.status === 404 || (!type.startsWith("text/plain") && (r.status < 300 || r.status >= 400))) {
      const why = await this.notSundeck();
      if (why) return new ClientError(why);
    }
    let line = text && type.startsWith("text/plain") ? (text.split("\n")[0] ?? "") : "";
    if (!line) line = `${r.status} ${r.statusText || "error"}`;
    if (line.length > 500) line = `${line.slice(0, 500)}…`;
    const retry = r.headers.get("retry-after");
    if (r.status === 429 && retry) line += ` (busy, retry in ${retry} s)`;
    if (r.status >= 300 && r.status < 400) line += ` (redirected to ${r.headers.get("location") ?? "?"}: check the URL)`;
    const app = /^\/apps\/([^/?]+)/.exec(path)?.[1];
    if (r.status === 404 && app && app !== "deploy") line += `: no app named ${decodeURIComponent(app)} on ${this.where}`;
    if (r.status === 401) {
      const k = this.target.keyFrom;
      line += ` (check ${k.startsWith("context ") ? `the API key of ${k}` : k})`;
    }
    return new ClientError(line);
  }
}
