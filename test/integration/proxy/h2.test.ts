/**
 * HTTP/2 to clients on the TLS listener (issue 29, `proxy.http2`): ALPN `h2` goes to the h2 terminator, HTTP/1.1 (or
 * no ALPN) stays on the raw engine; an h2 request is routed, allowed, counted and forwarded like an HTTP/1.1 one, over
 * HTTP/1.1 to the app with Sundeck's own framing; bodies stream both ways. The client is curl (Debian's, with
 * nghttp2), a real h2 client, against an HTTP/1.1 Bun.serve app.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Endpoint } from "../../../src/compose/model";
import { LogSink } from "../../../src/log/logger";
import { RequestStats } from "../../../src/modules/metrics/aggregator";
import { createProxyHandler } from "../../../src/proxy/handler";
import { type Listeners, startListeners } from "../../../src/proxy/listeners";
import { buildRouteTable } from "../../../src/proxy/route-table";
import type { CertSource } from "../../../src/proxy/types";
import { until } from "../../helpers/http";
import { opensslCa, opensslCert } from "../../helpers/tls";
import { tempDir } from "../../helpers/tmp";

const dir = tempDir();
const ca = opensslCa(dir, "h2 CA");
const leaf = opensslCert(dir, { sans: ["app.test", "deny.test", "none.test", "cut.test"], ca });
const log = new LogSink({ stdout: false }).logger("proxy");
const certs: CertSource = {
  sni: () => [{ serverName: "app.test", key: leaf.key, cert: leaf.cert }],
  fallback: () => ({ serverName: "", key: leaf.key, cert: leaf.cert }),
  onChange: () => () => {},
  http01: () => null,
  alpnChallenges: () => [],
};
const BIG = Buffer.alloc(3 * 1024 * 1024 + 17, "b");
/** Requests the app received, by path. */
const received: string[] = [];

/** The app: HTTP/1.1 only; says what it was sent, and serves a large body, a chunked one and a cut one. */
const upstream = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const url = new URL(req.url);
    received.push(`${req.method} ${url.pathname} ${req.headers.get("content-length") ?? "-"}`);
    if (url.pathname === "/big") return new Response(BIG, { headers: { "x-kind": "big" } });
    if (url.pathname === "/hop") {
      return new Response("hop", { headers: { "keep-alive": "timeout=5", "x-app": "1", "set-cookie": "a=1" } });
    }
    const body = req.body === null ? null : Buffer.from(await req.arrayBuffer());
    return Response.json({
      method: req.method,
      target: url.pathname + url.search,
      headers: Object.fromEntries(req.headers),
      bodyBytes: body?.length ?? null,
      bodyHead: body?.subarray(0, 8).toString() ?? null,
    });
  },
});

/** An app that declares 100,000 bytes and closes after 10. */
const cutter = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    data(s) {
      s.write("HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n0123456789");
      s.end();
    },
  },
});

const stats = new RequestStats();
let listeners: Listeners;
let plainOnly: Listeners;

function start(http2: boolean): Promise<Listeners> {
  const app = (slug: string, host: string, allow: string[] | null) => {
    const endpoints: Endpoint[] = [{ service: "web", port: 1, path: "/", tls: null, hosts: [host] }];
    return { slug, endpoints, labels: { endpoints, ratelimit: null, allow, registries: null }, stopped: false };
  };
  const table = buildRouteTable({
    apps: [app("app", "app.test", null), app("deny", "deny.test", ["10.9.9.9"]), app("cut", "cut.test", null)],
    upstreams: (slug) => [`127.0.0.1:${slug === "cut" ? cutter.port : upstream.port}`],
    defaults: { ratelimit: { requests: 1e9, windowMs: 60_000, burst: 1e9, by: "ip" }, tls: "local" },
  });
  const handler = createProxyHandler({ table: () => table, stats, log, proxyToken: "t" });
  return startListeners({
    config: { listenAddr: "127.0.0.1:0", httpListenAddr: "", mode: "local", http2 },
    handler,
    certs,
    log,
  });
}

/** curl against the listener on `port`; the response body, status and HTTP version. */
async function curl(port: number, host: string, path: string, args: string[] = []) {
  const out = `${dir}/out-${Math.random().toString(36).slice(2)}`;
  const p = Bun.spawn(
    [
      "curl",
      "-sS",
      "--cacert",
      ca.certPath,
      "--resolve",
      `${host}:${port}:127.0.0.1`,
      "-o",
      out,
      "-D",
      `${out}.h`,
      "-w",
      "%{http_version} %{http_code}",
      ...args,
      `https://${host}:${port}${path}`,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [w, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  const [version, status] = w.split(" ");
  const file = Bun.file(out);
  const body = (await file.exists()) ? Buffer.from(await file.arrayBuffer()) : Buffer.alloc(0);
  const headers = (await Bun.file(`${out}.h`).exists()) ? await Bun.file(`${out}.h`).text() : "";
  return { code, err, version, status: Number(status), body, headers: headers.toLowerCase() };
}

beforeAll(async () => {
  listeners = await start(true);
  plainOnly = await start(false);
});

afterAll(async () => {
  await listeners?.stop(true);
  await plainOnly?.stop(true);
  upstream.stop(true);
  cutter.stop(true);
});

describe("HTTP/2 on the TLS listener", () => {
  it("negotiates h2 by ALPN and forwards over HTTP/1.1 with the client's address and the authority as Host", async () => {
    const r = await curl(listeners.ports().main, "app.test", "/p/a?x=1", ["--http2", "-H", "x-custom: yes"]);
    expect(r.err).toBe("");
    expect(r.version).toBe("2");
    expect(r.status).toBe(200);
    const seen = JSON.parse(r.body.toString());
    expect(seen.method).toBe("GET");
    expect(seen.target).toBe("/p/a?x=1");
    expect(seen.headers.host).toBe(`app.test:${listeners.ports().main}`);
    expect(seen.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(seen.headers["x-forwarded-proto"]).toBe("https");
    expect(seen.headers["x-custom"]).toBe("yes");
    expect(seen.bodyBytes).toBeNull();
    expect(seen.headers["transfer-encoding"]).toBeUndefined();
    expect(seen.headers["content-length"]).toBeUndefined();
  });

  it("keeps HTTP/1.1 for clients that ask for it, and offers only HTTP/1.1 when http2 is off", async () => {
    const h1 = await curl(listeners.ports().main, "app.test", "/", ["--http1.1"]);
    expect([h1.version, h1.status]).toEqual(["1.1", 200]);
    const off = await curl(plainOnly.ports().main, "app.test", "/", ["--http2"]);
    expect([off.version, off.status]).toEqual(["1.1", 200]);
  });

  it("streams a request body with its length, or chunked upstream when the client declared none", async () => {
    const file = `${dir}/upload`;
    await Bun.write(file, Buffer.alloc(2 * 1024 * 1024, "u"));
    const sized = await curl(listeners.ports().main, "app.test", "/up", ["--http2", "--data-binary", `@${file}`]);
    const a = JSON.parse(sized.body.toString());
    expect([sized.version, a.method, a.bodyBytes, a.headers["content-length"]]).toEqual([
      "2",
      "POST",
      2 * 1024 * 1024,
      "2097152",
    ]);
    // -T with a pipe: no length known, so h2 DATA with no content-length; upstream it is chunked
    const p = Bun.spawn(
      [
        "sh",
        "-c",
        `cat ${file} | curl -sS --http2 --cacert ${ca.certPath} --resolve app.test:${listeners.ports().main}:127.0.0.1 -T - https://app.test:${listeners.ports().main}/put`,
      ],
      { stdout: "pipe" },
    );
    const b = JSON.parse(await new Response(p.stdout).text());
    expect([b.method, b.bodyBytes, b.headers["transfer-encoding"], b.headers["content-length"]]).toEqual([
      "PUT",
      2 * 1024 * 1024,
      "chunked",
      undefined,
    ]);
  });

  it("streams a large response whole, and drops the app's connection-specific headers", async () => {
    const r = await curl(listeners.ports().main, "app.test", "/big", ["--http2"]);
    expect([r.version, r.status, r.body.length]).toEqual(["2", 200, BIG.length]);
    expect(r.body.equals(BIG)).toBe(true);
    const hop = await curl(listeners.ports().main, "app.test", "/hop", ["--http2"]);
    expect(hop.headers).not.toContain("keep-alive");
    expect(hop.headers).toContain("x-app: 1");
    expect(hop.headers).toContain("set-cookie: a=1");
  });

  it("resets the stream of a response the app cut short: the client never takes it for a whole one", async () => {
    const r = await curl(listeners.ports().main, "cut.test", "/", ["--http2"]);
    // curl 7.88: "HTTP/2 stream 1 was not closed cleanly: INTERNAL_ERROR"
    expect(r.err).toContain("HTTP/2 stream");
    expect(r.code).not.toBe(0);
    expect(r.body.length).toBeLessThan(100_000);
    // the connection goes on serving others
    const next = await curl(listeners.ports().main, "app.test", "/after", ["--http2"]);
    expect(next.status).toBe(200);
  });

  it("never passes an h2c upgrade on the HTTP/1.1 path upstream as an upgrade", async () => {
    const r = await curl(listeners.ports().main, "app.test", "/h2c", [
      "--http1.1",
      "-H",
      "connection: upgrade, http2-settings",
      "-H",
      "upgrade: h2c",
      "-H",
      "http2-settings: AAMAAABkAAQCAAAAAAIAAAAA",
    ]);
    expect([r.version, r.status]).toEqual(["1.1", 200]);
    const seen = JSON.parse(r.body.toString());
    expect(seen.headers.upgrade).toBeUndefined();
    expect(seen.headers["http2-settings"]).toBeUndefined();
    expect(seen.headers.connection ?? "").not.toContain("upgrade");
  });

  it("answers with Sundeck's own pages: an unknown host 404, an address outside the allowlist 403", async () => {
    const none = await curl(listeners.ports().main, "none.test", "/", ["--http2"]);
    expect([none.version, none.status]).toEqual(["2", 404]);
    const deny = await curl(listeners.ports().main, "deny.test", "/", ["--http2"]);
    expect([deny.version, deny.status]).toEqual(["2", 403]);
  });

  it("multiplexes many streams on one connection, each counted in the app's request stats", async () => {
    stats.drain({ all: true });
    const urls: string[] = [];
    for (let i = 0; i < 20; i++) urls.push(`https://app.test:${listeners.ports().main}/m${i}`);
    const p = Bun.spawn(
      [
        "curl",
        "-sS",
        "--http2",
        "--parallel",
        "--parallel-max",
        "20",
        "--cacert",
        ca.certPath,
        "--resolve",
        `app.test:${listeners.ports().main}:127.0.0.1`,
        "-w",
        "%{http_version} %{num_connects}\\n",
        ...urls.flatMap((u) => ["-o", "/dev/null", u]),
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    const lines = (await new Response(p.stdout).text()).trim().split("\n");
    expect(lines.length).toBe(20);
    expect(lines.every((l) => l.startsWith("2 "))).toBe(true);
    // one connection carried them: the others reused it
    expect(lines.filter((l) => l.endsWith(" 1")).length).toBe(1);
    const counted = stats
      .drain({ all: true })
      .filter((b) => b.app === "app")
      .reduce((n, b) => n + b.count, 0);
    expect(counted).toBe(20);
  });
});

/** What `test/fixtures/h2-cases.py` saw for each case against 127.0.0.1:`port`. */
async function h2Cases(port: number, authority: string): Promise<Array<{ case: string; outcome: string }>> {
  const p = Bun.spawn(["/usr/bin/python3", `${import.meta.dir}/../../fixtures/h2-cases.py`, String(port), authority], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  if (code !== 0) throw new Error(`h2-cases.py failed (python3-h2 installed?): ${err}`);
  return out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

describe("HTTP/2 strictness against nghttpd (RFC 9113 8.1.1, 8.2.1, 8.2.2, 8.3, 8.3.1)", () => {
  it("refuses every malformed request nghttpd refuses, with nothing sent to the app, and answers what it answers", async () => {
    const docs = `${dir}/htdocs`;
    await Bun.write(`${docs}/index.html`, "hi");
    const ngPort = 20000 + Math.floor(Math.random() * 20000);
    const ng = Bun.spawn(["nghttpd", "-d", docs, String(ngPort), leaf.keyPath, leaf.certPath], {
      stdout: "ignore",
      stderr: "pipe",
    });
    try {
      const open = () => Bun.spawnSync(["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${ngPort}`]).exitCode === 0;
      await until(() => open() || null, { timeout: 5000, what: "nghttpd listening" });
      const reference = await h2Cases(ngPort, `localhost:${ngPort}`);
      received.length = 0;
      const ours = await h2Cases(listeners.ports().main, "app.test");
      expect(ours.map((c) => c.case)).toEqual(reference.map((c) => c.case));
      const answered = (o: string) => o.startsWith("status 2");
      // the valid requests, and nothing else, are answered by both
      expect(reference.filter((c) => answered(c.outcome)).map((c) => c.case)).toEqual(["valid", "te: trailers (allowed)"]);
      for (let i = 0; i < ours.length; i++) {
        const ref = reference[i].outcome;
        expect({ case: ours[i].case, refused: !answered(ours[i].outcome) }).toEqual({
          case: ours[i].case,
          refused: !answered(ref),
        });
        // a refusal is a stream error, as nghttpd's is (PROTOCOL_ERROR), never a 4xx that reached a handler
        if (!answered(ref)) expect(ours[i].outcome).toBe(ref);
      }
      // only the two valid requests reached the app
      expect(received).toEqual(["GET / -", "GET / -"]);
    } finally {
      ng.kill();
      await ng.exited;
    }
  }, 60_000);
});
