/**
 * The SSRF-safe POST every webhook delivery goes through. The URL is parsed by the WHATWG parser (which turns every
 * IPv4 spelling, decimal, octal, hex and short, into dotted form); its host is resolved once; every address must pass
 * the address policy or nothing is sent (a name with one private answer among public ones is refused as a whole);
 * the connection goes to a checked address itself, so a DNS answer that changes afterwards reaches nothing.
 * Retries with backoff on network errors and 5xx, never on 4xx, a redirect or a refused address.
 */
import { lookup } from "node:dns/promises";
import { checkAddress, literalHost, privateHint } from "./address-policy";
import { type ExchangeLimits, exchange } from "./exchange";

/** A name to its addresses, asked once per attempt. */
export type Resolver = (host: string) => Promise<string[]>;

/** The system resolver (getaddrinfo through node:dns `lookup`, every address). */
export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true })).map((a) => a.address);

/** SPEC Limits: 10 s overall, 5 s TLS handshake, 10 s to the response header; the TCP connect gets 5 s too. */
export const DELIVERY_LIMITS: ExchangeLimits = {
  totalMs: 10_000,
  connectMs: 5_000,
  tlsMs: 5_000,
  headersMs: 10_000,
  maxBodyBytes: 64 * 1024,
};

/** Attempts and the waits between them. */
export const RETRY_DELAYS_MS = [1_000, 5_000];

/** The outcome of one POST. `status` is 0 when no response arrived; `retry` says whether trying again could help. */
export interface PostResult {
  ok: boolean;
  status: number;
  error: string;
  /** The address connected to (or refused); null when none was reached. */
  address: string | null;
  retry: boolean;
}

export interface SafeHttpOptions {
  /** `webhooks.allow_private_destinations`: private, loopback, CGNAT and unique-local addresses pass. */
  allowPrivate: boolean;
  resolve?: Resolver;
  limits?: Partial<ExchangeLimits>;
  userAgent?: string;
}

/** Why a URL naming port 0 is refused, by this client and when a destination is stored. */
export const PORT_ERROR = "url must name a port from 1 to 65535";

/** A header name token and a value without control characters: nothing a caller passes can split the request. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[\0-\x08\x0a-\x1f\x7f]/;

const failed = (error: string, retry: boolean, address: string | null = null): PostResult => ({
  ok: false,
  status: 0,
  error,
  address,
  retry,
});

/** A short, single-line excerpt of a receiver's answer for the delivery log. */
function excerpt(body: string): string {
  const s = body.replace(/[\0-\x1f\x7f]+/g, " ").trim();
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

/** Build the client. */
export function createSafeHttp(opts: SafeHttpOptions) {
  const resolve = opts.resolve ?? systemResolver;
  const limits: ExchangeLimits = { ...DELIVERY_LIMITS, ...opts.limits };
  const userAgent = opts.userAgent ?? "sundeck-webhooks";

  /** The addresses of the URL's host, each checked; an error result when any is refused or none resolve. */
  async function addressesOf(url: URL): Promise<string[] | PostResult> {
    const literal = literalHost(url);
    let found: string[];
    if (literal) found = [literal];
    else {
      try {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("timed out")), limits.totalMs);
        });
        found = await Promise.race([resolve(url.hostname), timeout]).finally(() => clearTimeout(timer));
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        return failed(`cannot resolve ${url.hostname}: ${(err.code ?? err.message ?? "error").toLowerCase()}`, true);
      }
      if (found.length === 0) return failed(`cannot resolve ${url.hostname}: no addresses`, true);
    }
    const dial: string[] = [];
    for (const ip of found) {
      const v = checkAddress(ip, { allowPrivate: opts.allowPrivate });
      if (!v.ok)
        return failed(`destination address ${v.address} refused (${v.reason})${privateHint(v.reason)}`, false, v.address);
      if (!dial.includes(v.address)) dial.push(v.address);
    }
    return dial;
  }

  return {
    /** POST `body` as JSON to `url` once. Never rejects. */
    async post(urlText: string, body: string, headers: Record<string, string> = {}): Promise<PostResult> {
      let url: URL;
      try {
        url = new URL(urlText);
      } catch {
        return failed("invalid url", false);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") return failed("url must be http or https", false);
      if (url.username || url.password) return failed("url must not carry credentials", false);
      if (url.port !== "" && Number(url.port) === 0) return failed(PORT_ERROR, false);
      for (const [k, v] of Object.entries(headers)) {
        if (!TOKEN.test(k) || BAD_VALUE.test(v)) return failed(`invalid header ${k}`, false);
      }
      const payload = Buffer.from(body, "utf8");
      const head = [
        `POST ${url.pathname}${url.search} HTTP/1.1`,
        `Host: ${url.host}`,
        `User-Agent: ${userAgent}`,
        "Content-Type: application/json",
        `Content-Length: ${payload.length}`,
        "Connection: close",
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      const request = Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), payload]);

      const started = Date.now();
      const addresses = await addressesOf(url);
      if (!Array.isArray(addresses)) return addresses;
      const tls = url.protocol === "https:";
      const port = Number(url.port) || (tls ? 443 : 80);
      // SNI carries names only; an IP literal is checked against the certificate's IP entries instead
      const servername = literalHost(url) ? null : url.hostname.replace(/\.$/, "");
      let last: PostResult = failed("no address to connect to", true);
      for (const address of addresses) {
        const left = limits.totalMs - (Date.now() - started);
        if (left <= 0) break;
        const out = await exchange({ address, port, tls, servername }, request, {
          ...limits,
          totalMs: left,
          deadlineMs: limits.totalMs,
        });
        if (out.kind === "error") {
          last = failed(out.error, true, address);
          // another address of the same name may answer when this one cannot be reached at all
          if (out.phase === "connect") continue;
          return last;
        }
        const s = out.status;
        if (s >= 200 && s < 300) return { ok: true, status: s, error: "", address, retry: false };
        if (s >= 300 && s < 400) return { ok: false, status: s, error: `redirect not followed (${s})`, address, retry: false };
        const said = excerpt(out.body);
        return { ok: false, status: s, error: `receiver answered ${s}${said ? `: ${said}` : ""}`, address, retry: s >= 500 };
      }
      return last;
    },
  };
}

/** The client's type. */
export type SafeHttp = ReturnType<typeof createSafeHttp>;

/** Run `attempt` until it succeeds, says not to retry, or the delays run out; `sleep` is injectable for tests. */
export async function withRetries(
  attempt: () => Promise<PostResult>,
  delaysMs: readonly number[] = RETRY_DELAYS_MS,
  sleep: (ms: number) => Promise<void> = (ms) => Bun.sleep(ms),
): Promise<{ result: PostResult; attempts: number }> {
  let attempts = 0;
  for (;;) {
    const result = await attempt();
    attempts++;
    if (result.ok || !result.retry || attempts > delaysMs.length) return { result, attempts };
    await sleep(delaysMs[attempts - 1]);
  }
}
