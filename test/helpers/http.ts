/** A small HTTP client for API tests: keeps a session cookie, answers status, headers, text and parsed JSON. */

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed body when it is JSON, else undefined. */
  json: any;
}

export interface ClientOptions {
  cookie?: string;
  bearer?: string;
  headers?: Record<string, string>;
}

/** An API client bound to a base URL and (optionally) a credential. */
export class Client {
  cookie?: string;
  bearer?: string;
  extra: Record<string, string>;

  constructor(
    readonly base: string,
    opts: ClientOptions = {},
  ) {
    this.cookie = opts.cookie;
    this.bearer = opts.bearer;
    this.extra = opts.headers ?? {};
  }

  /** A client with the same base and another credential. */
  as(opts: ClientOptions): Client {
    return new Client(this.base, opts);
  }

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    const h: Record<string, string> = { ...this.extra, ...headers };
    if (this.cookie) h.cookie = `session=${this.cookie}`;
    if (this.bearer) h.authorization = `Bearer ${this.bearer}`;
    let payload: BodyInit | undefined;
    if (body !== undefined) {
      if (typeof body === "string" || body instanceof Uint8Array || body instanceof FormData) payload = body as BodyInit;
      else {
        payload = JSON.stringify(body);
        h["content-type"] ??= "application/json";
      }
    }
    const res = await fetch(this.base + path, { method, headers: h, body: payload, redirect: "manual" });
    const text = await res.text();
    let json: any;
    if ((res.headers.get("content-type") ?? "").includes("json")) json = JSON.parse(text);
    const set = res.headers.get("set-cookie");
    const m = set && /(?:^|,\s*)session=([^;]*)/.exec(set);
    if (m) this.cookie = m[1] || undefined;
    return { status: res.status, headers: res.headers, text, json };
  }

  get = (path: string, headers?: Record<string, string>) => this.request("GET", path, undefined, headers);
  post = (path: string, body?: unknown, headers?: Record<string, string>) => this.request("POST", path, body, headers);
  put = (path: string, body?: unknown, headers?: Record<string, string>) => this.request("PUT", path, body, headers);
  del = (path: string, headers?: Record<string, string>) => this.request("DELETE", path, undefined, headers);
}

/** Wait until `fn` returns a truthy value or the deadline passes (no fixed sleeps in tests). */
export async function until<T>(
  fn: () => T | Promise<T>,
  opts: { timeout?: number; every?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const end = Date.now() + (opts.timeout ?? 5000);
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${opts.what ?? "condition"}${last ? `: ${last}` : ""}`);
    await Bun.sleep(opts.every ?? 20);
  }
}
