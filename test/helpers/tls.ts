/**
 * TLS helpers for tests: certificates made with the real openssl binary, what `openssl s_client -servername` sees on
 * a listener, and HTTPS requests with a custom CA and SNI against a loopback port.
 */
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerWebSocket } from "bun";
import { LogSink } from "../../src/log/logger";
import { WaitingAttempts } from "../../src/proxy/attempts";
import type { ProxyCore } from "../../src/proxy/handler";
import type { Route } from "../../src/proxy/route-table";
import type { ProxyHandler } from "../../src/proxy/types";

/** A PEM certificate (chain) and key, with the files they were written to. */
export interface PemPair {
  cert: string;
  key: string;
  certPath: string;
  keyPath: string;
}

function run(args: string[], cwd: string): string {
  const p = Bun.spawnSync(args, { cwd, stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${args.join(" ")} failed: ${p.stderr.toString()}`);
  return p.stdout.toString();
}

let seq = 0;

/** A CA certificate and key (ECDSA P-256) made with openssl. */
export function opensslCa(dir: string, cn = "Test CA"): PemPair {
  const name = `ca${++seq}`;
  run(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.crt`,
      "-days",
      "30",
      "-subj",
      `/CN=${cn}`,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ],
    dir,
  );
  return read(dir, name);
}

/**
 * A leaf certificate made with openssl: SANs (`DNS:` or `IP:` prefixes optional, bare names become DNS), signed by
 * `ca` or self-signed, valid `days` days (-1 makes one that expired yesterday).
 */
export function opensslCert(
  dir: string,
  opts: { sans: string[]; ca?: PemPair; days?: number; cn?: string; rsa?: boolean },
): PemPair {
  const name = `leaf${++seq}`;
  const keyArgs = opts.rsa ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];
  run(
    [
      "openssl",
      "req",
      "-new",
      ...keyArgs,
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.csr`,
      "-subj",
      `/CN=${opts.cn ?? opts.sans[0]}`,
    ],
    dir,
  );
  const sans = opts.sans.map((s) => (/^(DNS|IP):/.test(s) ? s : `DNS:${s}`)).join(",");
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${sans}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  const sign = opts.ca ? ["-CA", opts.ca.certPath, "-CAkey", opts.ca.keyPath, "-CAcreateserial"] : ["-signkey", `${name}.key`];
  run(
    [
      "openssl",
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      ...sign,
      "-days",
      String(opts.days ?? 30),
      "-out",
      `${name}.crt`,
      "-extfile",
      `${name}.ext`,
    ],
    dir,
  );
  return read(dir, name);
}

function read(dir: string, name: string): PemPair {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  return { cert: readFileSync(certPath, "utf8"), key: readFileSync(keyPath, "utf8"), certPath, keyPath };
}

/** What a TLS client saw: the leaf's subject, issuer, SANs, expiry, the negotiated ALPN and the whole chain. */
export interface Served {
  subject: string;
  issuer: string;
  sans: string[];
  notAfter: Date;
  fingerprint: string;
  alpn: string | null;
  /** PEM of every certificate the server sent, leaf first. */
  chain: string[];
}

/** Run `openssl s_client -connect host:port -servername name` (no SNI when name is empty) and parse what it saw. */
export async function sClient(port: number, serverName: string, opts: { host?: string; alpn?: string } = {}): Promise<Served> {
  const args = ["openssl", "s_client", "-connect", `${opts.host ?? "127.0.0.1"}:${port}`, "-showcerts"];
  if (serverName) args.push("-servername", serverName);
  else args.push("-noservername");
  if (opts.alpn) args.push("-alpn", opts.alpn);
  const p = Bun.spawn(args, { stdin: new TextEncoder().encode("Q\n"), stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill(), 10_000);
  const [out] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  clearTimeout(timer);
  const chain = out.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (chain.length === 0) throw new Error(`openssl s_client saw no certificate on port ${port} for ${serverName || "(no sni)"}`);
  const leaf = new X509Certificate(chain[0]!);
  const alpn = /ALPN protocol: (\S+)/.exec(out)?.[1] ?? null;
  return {
    subject: leaf.subject,
    issuer: leaf.issuer,
    sans: (leaf.subjectAltName ?? "")
      .split(",")
      .map((s) => s.trim().replace(/^(DNS|IP Address):/, ""))
      .filter(Boolean),
    notAfter: new Date(leaf.validTo),
    fingerprint: leaf.fingerprint256,
    alpn,
    chain,
  };
}

/** Verify a served chain against `caPem` with `openssl verify` (intermediates from the chain). */
export function opensslVerify(served: Served, caPem: string, host: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "sundeck-verify-"));
  writeFileSync(join(dir, "ca.pem"), caPem);
  writeFileSync(join(dir, "leaf.pem"), served.chain[0]);
  writeFileSync(join(dir, "untrusted.pem"), served.chain.slice(1).join("\n") || served.chain[0]);
  const args = ["openssl", "verify", "-CAfile", "ca.pem", "-verify_hostname", host];
  if (served.chain.length > 1) args.push("-untrusted", "untrusted.pem");
  args.push("leaf.pem");
  const p = Bun.spawnSync(args, { cwd: dir, stdout: "pipe", stderr: "pipe" });
  return { ok: p.exitCode === 0, output: p.stdout.toString() + p.stderr.toString() };
}

/**
 * GET `https://<host><path>` on a loopback port, sending SNI and Host `host` and trusting only `ca`. Bun's fetch keeps
 * connections alive and pools them, as a browser would.
 */
export function fetchTls(
  port: number,
  host: string,
  path: string,
  ca: string | string[],
  init: RequestInit = {},
): Promise<Response> {
  return fetch(`https://127.0.0.1:${port}${path}`, {
    ...init,
    redirect: "manual",
    headers: { host, ...(init.headers as Record<string, string> | undefined) },
    tls: { ca, serverName: host },
  } as RequestInit);
}

/**
 * A ProxyHandler for listener tests: every request goes through the raw engine to an upstream on loopback that
 * answers JSON with the host, path, the client address and scheme it was told (X-Forwarded-For's first entry,
 * X-Forwarded-Proto) and the X-Forwarded-For it received; `/hold` waits for `release()`; `/ws` upgrades to a WebSocket
 * that echoes each message after the same facts.
 */
export function echoHandler() {
  let held: Array<() => void> = [];
  const state = { holding: 0 };
  const facts = (req: Request) => {
    const xff = req.headers.get("x-forwarded-for") ?? "";
    return { clientIp: xff.split(",")[0].trim(), secure: req.headers.get("x-forwarded-proto") === "https", xff };
  };
  const upstream = Bun.serve<{ facts: ReturnType<typeof facts> }>({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req, server) {
      const url = new URL(req.url);
      if (url.pathname === "/ws") {
        return server.upgrade(req, { data: { facts: facts(req) } }) ? undefined : new Response("no", { status: 400 });
      }
      if (url.pathname === "/hold") {
        state.holding++;
        await new Promise<void>((r) => held.push(r));
        state.holding--;
      }
      return Response.json({ host: req.headers.get("host"), path: url.pathname, query: url.search, ...facts(req) });
    },
    websocket: {
      message(ws: ServerWebSocket<{ facts: ReturnType<typeof facts> }>, msg: string | Buffer) {
        ws.send(`${JSON.stringify(ws.data.facts)} ${msg}`);
      },
    },
  });
  const route: Route = {
    app: "echo",
    service: "web",
    prefix: "/",
    tls: null,
    upstreams: [`127.0.0.1:${upstream.port}`],
    ratelimit: null,
    allow: null,
    stopped: false,
    next: 0,
  };
  const core: ProxyCore = {
    admit: (r, info, t0) => ({
      forward: {
        route,
        upstream: route.upstreams[0],
        target: r.target,
        host: r.headers.get("host") ?? r.authority,
        info,
        authority: r.authority,
        path: r.path,
        t0,
      },
    }),
    reroute: () => null,
    waiting: new WaitingAttempts(),
    record: () => {},
    headersMs: 60_000,
    wsConnectMs: 10_000,
    proxyToken: "t",
    log: new LogSink({ stdout: false }).logger("proxy"),
  };
  const handler: ProxyHandler = { core };
  return {
    handler,
    /** Requests waiting in `/hold`. */
    holding: () => state.holding,
    /** Stop the loopback upstream. */
    stop: () => upstream.stop(true),
    /** Let every held request answer. */
    release() {
      for (const r of held) r();
      held = [];
    },
  };
}
