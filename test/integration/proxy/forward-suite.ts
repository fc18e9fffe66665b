/**
 * The proxy against real upstreams on the host (Bun servers): forwarding, headers, errors, limits, streaming and
 * WebSockets through the raw HTTP/1.1 engine, with clients on a plain listener (forward.test.ts) or on the real TLS
 * listener (forward-tls.test.ts). The container-backed tests are in proxy.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { AppLabels, Endpoint } from "../../../src/compose/model";
import { LogSink } from "../../../src/log/logger";
import { RequestStats } from "../../../src/modules/metrics/aggregator";
import { serveRaw } from "../../../src/proxy/h1/server";
import { createProxyHandler, type ProxyRequestHandler } from "../../../src/proxy/handler";
import { startListeners } from "../../../src/proxy/listeners";
import { buildRouteTable, type RouteTable } from "../../../src/proxy/route-table";
import { until } from "../../helpers/http";
import { opensslCert } from "../../helpers/tls";
import { tempDir } from "../../helpers/tmp";
import { GZIP_BODY, type HostUpstream, startUpstream } from "../../helpers/upstream";

const MiB = 1024 * 1024;

/** A listener in front of the handler. */
interface Front {
  port: number;
  stop(closeActive?: boolean): Promise<unknown>;
}

/** How clients reach the proxy: plain HTTP, or TLS through the real TLS listener. */
export type FrontKind = "plain" | "tls";

/** Self-signed, for any name: the suite is about forwarding, certificate choice is tested in listener-tls.test.ts. */
const pair = opensslCert(tempDir(), { sans: ["proxy.test"] });
/** What fetch and WebSocket need to talk to the TLS listener. */
const insecure = { tls: { rejectUnauthorized: false } };

export function forwardSuite(kind: FrontKind): void {
  let one: HostUpstream;
  let two: HostUpstream;
  let closedPort: number;
  /** Accepts, reads the request, closes without answering (a replica going away). */
  let slam: { port: number; stop(closeActive?: boolean): void };
  let table: RouteTable;
  let stats: RequestStats;
  let handler: ProxyRequestHandler;
  let plainProxy: Front;
  let tlsProxy: Front;
  /** The front the suite talks to (`kind`). */
  let proxy: Front;
  let base: string;
  const scheme = kind === "tls" ? "https" : "http";
  const wsScheme = kind === "tls" ? "wss" : "ws";

  function app(
    slug: string,
    endpoints: Array<Partial<Endpoint> & { hosts: string[] }>,
    extra: Partial<AppLabels> = {},
    stopped = false,
  ) {
    const eps = endpoints.map((e) => ({ service: "web", port: 1, path: "/", tls: null, ...e }));
    return {
      slug,
      endpoints: eps,
      labels: { endpoints: eps, ratelimit: null, allow: null, registries: null, ...extra },
      stopped,
    };
  }

  async function serve(h: ProxyRequestHandler, secure: boolean): Promise<Front> {
    const log = new LogSink({ stdout: false }).logger("proxy");
    if (!secure) {
      const s = serveRaw({ hostname: "127.0.0.1", port: 0, core: h.core, info: (peer) => ({ clientIp: peer, secure }), log });
      return { port: s.port, stop: (c) => s.stop(c) };
    }
    const fallback = { serverName: "", key: pair.key, cert: pair.cert };
    const l = await startListeners({
      config: { listenAddr: "127.0.0.1:0", httpListenAddr: "", mode: "custom" },
      handler: h,
      certs: { sni: () => [], fallback: () => fallback, onChange: () => () => {}, http01: () => null, alpnChallenges: () => [] },
      log,
    });
    return { port: l.ports().main, stop: (c) => l.stop(c) };
  }

  /** A request to the proxy for `host`. */
  function get(host: string, path = "/", init: RequestInit = {}, to = base) {
    return fetch(`${to}${path}`, {
      redirect: "manual",
      ...insecure,
      ...init,
      headers: { host, ...(init.headers as Record<string, string>) },
    } as RequestInit);
  }

  beforeAll(async () => {
    one = startUpstream("one");
    two = startUpstream("two");
    const probe = Bun.serve({ port: 0, fetch: () => new Response() });
    closedPort = probe.port!;
    await probe.stop(true);
    slam = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data: (sock) => void sock.end() } });
    const addrs: Record<string, string[]> = {
      "echo/web": [one.addr],
      "echo/api": [two.addr],
      "pair/web": [one.addr, two.addr],
      "limited/web": [one.addr],
      "deny/web": [one.addr],
      "allow/web": [one.addr],
      "refused/web": [`127.0.0.1:${closedPort}`],
      "retry/web": [`127.0.0.1:${closedPort}`, one.addr],
      "slam/web": [`127.0.0.1:${slam.port}`, one.addr],
      "slow/web": [one.addr],
      "ws/web": [one.addr],
      "off/web": [one.addr],
    };
    table = buildRouteTable({
      apps: [
        app("echo", [{ hosts: ["echo.test"] }, { service: "api", hosts: ["echo.test"], path: "/api" }]),
        app("pair", [{ hosts: ["pair.test"] }]),
        app("limited", [{ hosts: ["limited.test"] }], { ratelimit: { requests: 60, window: "60s", burst: 2 } }),
        app("deny", [{ hosts: ["deny.test"] }], { allow: ["10.0.0.0/8"] }),
        app("allow", [{ hosts: ["allow.test"] }], { allow: ["10.0.0.0/8", "127.0.0.1"] }),
        app("refused", [{ hosts: ["refused.test"] }]),
        app("retry", [{ hosts: ["retry.test"] }]),
        app("slam", [{ hosts: ["slam.test"] }]),
        app("slow", [{ hosts: ["slow.test"] }]),
        app("empty", [{ hosts: ["empty.test"] }]),
        app("stopped", [{ hosts: ["stopped.test"] }], {}, true),
        app("ws", [{ hosts: ["ws.test"] }]),
        app("off", [{ hosts: ["off.test"], tls: "off" }]),
      ],
      upstreams: (slug, service) => addrs[`${slug}/${service}`] ?? [],
      management: { hosts: ["deck.test"], upstream: one.addr },
      defaults: { ratelimit: { requests: 100_000, windowMs: 60_000, burst: 100_000, by: "ip" }, tls: "auto" },
    });
    stats = new RequestStats();
    handler = createProxyHandler({
      table: () => table,
      stats,
      log: new LogSink({ stdout: false }).logger("proxy"),
      proxyToken: "secret-token",
      timeouts: { headersMs: 400, wsConnectMs: 2000 },
    });
    plainProxy = await serve(handler, false);
    tlsProxy = await serve(handler, true);
    proxy = kind === "tls" ? tlsProxy : plainProxy;
    base = `${scheme}://127.0.0.1:${proxy.port}`;
  });

  afterAll(async () => {
    await plainProxy?.stop(true);
    await tlsProxy?.stop(true);
    await one?.stop();
    await two?.stop();
    slam?.stop(true);
  });

  const headerOf = (echo: { headers: [string, string][] }, name: string) =>
    echo.headers.filter(([k]) => k === name).map(([, v]) => v);

  describe("routing and forwarding", () => {
    it("routes by host and by path prefix to different services", async () => {
      expect((await (await get("echo.test", "/hello")).json()).name).toBe("one");
      expect((await (await get("echo.test", "/api/x")).json()).name).toBe("two");
      expect((await (await get("ECHO.test:9999", "/api")).json()).name).toBe("two");
      expect((await (await get("echo.test", "/apix")).json()).name).toBe("one");
    });

    it("answers an unknown host with a 404 page", async () => {
      const r = await get("nobody.test");
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const html = await r.text();
      expect(html).toContain("<title>404 Not Found</title>");
      expect(html).not.toMatch(/<(link|script|img)\b/);
    });

    it("balances requests across replicas", async () => {
      const names: string[] = [];
      for (let i = 0; i < 10; i++) names.push(await (await get("pair.test", "/name")).text());
      expect(names.filter((n) => n === "one").length).toBe(5);
      expect(names.filter((n) => n === "two").length).toBe(5);
    });

    it("sends X-Forwarded-* and keeps Host, path, query and method", async () => {
      const r = await get("echo.test:8080", "/p/a?x=1&y=%20", {
        method: "POST",
        body: "payload",
        headers: { "x-forwarded-for": "6.6.6.6", "x-forwarded-proto": "https", "x-sundeck-proxy": "forged", cookie: "s=1" },
      });
      const echo = await r.json();
      expect(echo.method).toBe("POST");
      expect(echo.body).toBe("payload");
      expect(echo.url).toBe("http://echo.test:8080/p/a?x=1&y=%20");
      expect(headerOf(echo, "host")).toEqual(["echo.test:8080"]);
      expect(headerOf(echo, "x-forwarded-for")).toEqual(["127.0.0.1"]);
      expect(headerOf(echo, "x-forwarded-proto")).toEqual([scheme]);
      expect(headerOf(echo, "x-forwarded-host")).toEqual(["echo.test:8080"]);
      expect(headerOf(echo, "x-sundeck-proxy")).toEqual([]);
      expect(headerOf(echo, "cookie")).toEqual(["s=1"]);
    });

    it("says https to the upstream for TLS requests and adds HSTS unless the route is off", async () => {
      const tls = `https://127.0.0.1:${tlsProxy.port}`;
      const plain = `http://127.0.0.1:${plainProxy.port}`;
      const r = await get("echo.test", "/", {}, tls);
      expect(headerOf(await r.json(), "x-forwarded-proto")).toEqual(["https"]);
      expect(r.headers.get("strict-transport-security")).toBe("max-age=31536000");
      expect((await get("off.test", "/", {}, tls)).headers.get("strict-transport-security")).toBeNull();
      expect((await get("echo.test", "/hsts", {}, tls)).headers.get("strict-transport-security")).toBe("max-age=5");
      expect((await get("echo.test", "/", {}, plain)).headers.get("strict-transport-security")).toBeNull();
      expect((await get("empty.test", "/", {}, tls)).headers.get("strict-transport-security")).toBe("max-age=31536000");
    });

    it("adds the proxy token toward the management upstream only", async () => {
      const echo = await (await get("deck.test", "/api/me", { headers: { "x-sundeck-proxy": "forged" } })).json();
      expect(headerOf(echo, "x-sundeck-proxy")).toEqual(["secret-token"]);
      expect(headerOf(echo, "x-forwarded-host")).toEqual(["deck.test"]);
    });

    it("removes hop-by-hop headers both ways", async () => {
      const echo = await (
        await get("echo.test", "/", {
          headers: {
            connection: "keep-alive, x-hop",
            "x-hop": "1",
            "keep-alive": "300",
            te: "trailers",
            "proxy-authorization": "x",
          },
        })
      ).json();
      for (const h of ["x-hop", "keep-alive", "te", "proxy-authorization"]) expect(headerOf(echo, h)).toEqual([]);
      const r = await get("echo.test", "/cookies");
      expect(r.status).toBe(302);
      expect(r.headers.get("x-hop-resp")).toBeNull();
      expect(r.headers.get("keep-alive")).toBeNull();
      expect(r.headers.get("location")).toBe("/next?a=1&b=%20");
      expect(r.headers.getSetCookie()).toEqual(["a=1; Path=/; HttpOnly", "b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT"]);
    });

    it("passes gzip bodies through untouched", async () => {
      const r = await get("echo.test", "/gzip", { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
      expect(r.headers.get("content-encoding")).toBe("gzip");
      expect(new Uint8Array(await r.arrayBuffer())).toEqual(GZIP_BODY);
    });

    it("answers HEAD, 204 and 304 without a body", async () => {
      const head = await get("echo.test", "/fixed", { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-length")).toBe("12");
      expect(await head.text()).toBe("");
      const none = await get("echo.test", "/204");
      expect(none.status).toBe(204);
      expect(none.headers.get("x-empty")).toBe("1");
      expect(await none.text()).toBe("");
      const nm = await get("echo.test", "/304");
      expect(nm.status).toBe(304);
      expect(nm.headers.get("etag")).toBe('"v1"');
    });

    it("passes very long headers (up to Bun's 16 KiB header block)", async () => {
      const long = "v".repeat(12 * 1024);
      const echo = await (await get("echo.test", "/", { headers: { "x-long": long } })).json();
      expect(headerOf(echo, "x-long")).toEqual([long]);
    });

    it("handles Expect: 100-continue and absolute-form request targets", async () => {
      const curl = async (...args: string[]) => {
        const p = Bun.spawn(["curl", "-s", "-k", "--proxy-insecure", "-i", "-m", "10", ...args], {
          stdout: "pipe",
          stderr: "pipe",
        });
        return await new Response(p.stdout).text();
      };
      const expectOut = await curl(
        "-H",
        "Host: echo.test",
        "-H",
        "Expect: 100-continue",
        "--data-binary",
        "x".repeat(4096),
        `${base}/exp`,
      );
      expect(expectOut).toContain("HTTP/1.1 100 Continue");
      expect(expectOut).toContain('"body":"xxxx');
      const abs = await curl("--proxy", base, "http://echo.test/abs?q=1");
      expect(abs).toContain("HTTP/1.1 200");
      expect(abs).toContain('"url":"http://echo.test/abs?q=1"');
    });

    it("forwards a GET that came with a body", async () => {
      const p = Bun.spawn(
        ["curl", "-s", "-k", "-m", "10", "-X", "GET", "-H", "Host: echo.test", "--data-binary", "ignored", `${base}/g`],
        { stdout: "pipe" },
      );
      const echo = JSON.parse(await new Response(p.stdout).text());
      expect(echo.method).toBe("GET");
      expect(headerOf(echo, "content-length")).toEqual(["7"]);
    });
  });

  describe("errors", () => {
    it("answers 503 with Retry-After when an app has no healthy replica, and says when it is stopped", async () => {
      const r = await get("empty.test");
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("5");
      expect(await r.text()).toContain("<title>503 Service Unavailable</title>");
      expect(await (await get("stopped.test")).text()).toContain("stopped");
    });

    it("answers 502 when the upstream refuses", async () => {
      const r = await get("refused.test");
      expect(r.status).toBe(502);
      expect(await r.text()).toContain("<title>502 Bad Gateway</title>");
    });

    it("moves idempotent requests to the next replica when one refuses, never a POST", async () => {
      for (let i = 0; i < 4; i++) expect((await get("retry.test", "/name")).status).toBe(200);
      const put = await Promise.all([0, 1].map(() => get("retry.test", "/", { method: "PUT", body: "data" })));
      for (const r of put) expect(r.status).toBe(200);
      const posts = await Promise.all([0, 1].map(() => get("retry.test", "/", { method: "POST", body: "x" })));
      expect(posts.map((r) => r.status).sort()).toEqual([200, 502]);
    });

    it("moves a bodyless idempotent request off a replica that closes without answering, never a POST", async () => {
      for (let i = 0; i < 4; i++) expect((await get("slam.test", "/name")).status).toBe(200);
      const posts = await Promise.all([0, 1].map(() => get("slam.test", "/", { method: "POST", body: "x" })));
      expect(posts.map((r) => r.status).sort()).toEqual([200, 502]);
    });

    it("answers 504 when the upstream sends no headers in time", async () => {
      const t0 = Date.now();
      const r = await get("slow.test", "/slow?ms=3000");
      expect(r.status).toBe(504);
      expect(Date.now() - t0).toBeLessThan(2500);
      expect(await r.text()).toContain("<title>504 Gateway Timeout</title>");
      // a response that starts in time may take longer than the header timeout to finish
      expect((await get("slow.test", "/big?mb=20")).status).toBe(200);
    });
  });

  describe("replicas leaving the table", () => {
    it("moves a GET waiting on a replica that left the table to another one", async () => {
      // accepts connections, never answers: a request to it waits for headers
      let received = 0;
      const silent = Bun.listen({
        hostname: "127.0.0.1",
        port: 0,
        socket: {
          data() {
            received++;
          },
        },
      });
      const mk = (ups: string[]) =>
        buildRouteTable({
          apps: [app("moving", [{ hosts: ["moving.test"] }])],
          upstreams: () => ups,
          defaults: { ratelimit: { requests: 1000, windowMs: 60_000, burst: 1000, by: "ip" } },
        });
      let current = mk([`127.0.0.1:${silent.port}`]);
      const h = createProxyHandler({
        table: () => current,
        stats: new RequestStats(),
        log: new LogSink({ stdout: false }).logger("proxy"),
        proxyToken: "t",
      });
      const p = await serve(h, kind === "tls");
      const to = `${scheme}://127.0.0.1:${p.port}`;
      try {
        const pending = get("moving.test", "/name", {}, to);
        const post = get("moving.test", "/", { method: "POST", body: "x" }, to);
        await until(() => received >= 2, { what: "both requests at the silent replica" });
        current = mk([one.addr]);
        h.tableChanged();
        const r = await pending;
        expect(r.status).toBe(200);
        expect(await r.text()).toBe("one");
        // a POST is never resent: it keeps waiting on the replica it went to
        const lost = await Promise.race([post.then(() => "answered"), Bun.sleep(300).then(() => "waiting")]);
        expect(lost).toBe("waiting");
      } finally {
        await p.stop(true);
        silent.stop(true);
      }
    });
  });

  describe("access rules", () => {
    it("answers 403 to addresses outside the allowlist", async () => {
      const r = await get("deny.test");
      expect(r.status).toBe(403);
      expect(await r.text()).toContain("<title>403 Forbidden</title>");
      expect((await get("allow.test")).status).toBe(200);
    });

    it("answers 429 with Retry-After past the burst", async () => {
      expect((await get("limited.test")).status).toBe(200);
      expect((await get("limited.test")).status).toBe(200);
      const r = await get("limited.test");
      expect(r.status).toBe(429);
      expect(r.headers.get("retry-after")).toBe("1"); // 60 per minute: one token a second
      expect(await r.text()).toContain("<title>429 Too Many Requests</title>");
    });
  });

  describe("streaming", () => {
    it("streams a 50 MiB upload: the echo starts before the upload ends", async () => {
      const chunk = new Uint8Array(256 * 1024).fill(7);
      let sent = 0;
      const total = 50 * MiB;
      const body = new ReadableStream({
        async pull(c) {
          if (sent >= total) return c.close();
          c.enqueue(chunk);
          sent += chunk.length;
          if (sent % (4 * MiB) === 0) await Bun.sleep(1);
        },
      });
      const r = await get("echo.test", "/stream-echo", { method: "POST", body, duplex: "half" } as RequestInit);
      expect(r.status).toBe(200);
      let received = 0;
      let sentAtFirstByte = -1;
      for await (const part of r.body!) {
        if (sentAtFirstByte < 0) sentAtFirstByte = sent;
        received += part.length;
      }
      expect(received).toBe(total);
      expect(sentAtFirstByte).toBeGreaterThan(0);
      expect(sentAtFirstByte).toBeLessThan(total / 2);
    });

    it("streams a 50 MiB download without buffering it", async () => {
      const r = await get("echo.test", "/big?mb=50");
      expect(r.status).toBe(200);
      const reader = r.body!.getReader();
      const first = await reader.read();
      // the upstream produces on demand: at the first byte it has made a few socket buffers' worth, not 50 MiB
      expect(one.produced).toBeLessThan(24 * MiB);
      let received = first.value!.length;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received += value.length;
      }
      expect(received).toBe(50 * MiB);
      // the upstream connection that carried it goes back to the pool reading (it was paused while the client lagged)
      for (let i = 0; i < 4; i++) expect((await get("echo.test", `/after-big-${i}`)).status).toBe(200);
    });
  });

  describe("websockets", () => {
    function open(host: string, path = "/ws?room=1", opts: Record<string, unknown> = {}) {
      const { headers, ...rest } = opts as { headers?: Record<string, string> };
      const ws = new WebSocket(`${wsScheme}://127.0.0.1:${proxy.port}${path}`, {
        ...insecure,
        headers: { host, ...headers },
        ...rest,
      } as unknown as string[]);
      ws.binaryType = "arraybuffer";
      const messages: unknown[] = [];
      const closed = new Promise<CloseEvent>((resolve) => (ws.onclose = resolve));
      ws.onmessage = (e) => messages.push(e.data);
      const opened = new Promise<void>((resolve, reject) => {
        ws.onopen = () => resolve();
        ws.onerror = () => reject(new Error("websocket error"));
      });
      return { ws, messages, closed, opened };
    }

    it("proxies text and binary frames both ways with the client's headers", async () => {
      const c = open("ws.test", "/ws?room=1", {
        headers: { origin: "https://ws.test", cookie: "sid=abc", authorization: "Bearer t" },
      });
      await c.opened;
      await until(() => c.messages.length >= 1, { what: "hello frame" });
      const hello = JSON.parse(c.messages[0] as string);
      expect(hello.url).toBe("http://ws.test/ws?room=1");
      expect(hello.headers.host).toBe("ws.test");
      expect(hello.headers.origin).toBe("https://ws.test");
      expect(hello.headers.cookie).toBe("sid=abc");
      expect(hello.headers.authorization).toBe("Bearer t");
      expect(hello.headers["x-forwarded-for"]).toBe("127.0.0.1");
      expect(hello.headers["x-forwarded-host"]).toBe("ws.test");
      c.ws.send("ping text");
      c.ws.send(new Uint8Array([1, 2, 3, 250]));
      await until(() => c.messages.length >= 3, { what: "echoes" });
      expect(c.messages[1]).toBe("ping text");
      expect(new Uint8Array(c.messages[2] as ArrayBuffer)).toEqual(new Uint8Array([1, 2, 3, 250]));
      c.ws.close(4001, "done here");
      const ev = await c.closed;
      expect(ev.code).toBe(4001);
      await until(() => one.wsCloses.some((x) => x.code === 4001 && x.reason === "done here"), { what: "upstream close" });
    });

    it("passes the upstream's close code and reason to the client; an abnormal close is 1006", async () => {
      const c = open("ws.test");
      await c.opened;
      c.ws.send("close:4002:bye now");
      const ev = await c.closed;
      expect(ev.code).toBe(4002);
      expect(ev.reason).toBe("bye now");
      const d = open("ws.test");
      await d.opened;
      d.ws.send("terminate");
      expect((await d.closed).code).toBe(1006);
    });

    it("negotiates the subprotocol the upstream picks", async () => {
      const c = open("ws.test", "/", { protocols: ["chat.v1", "chat.v2"] });
      await c.opened;
      expect(c.ws.protocol).toBe("chat.v2");
      c.ws.close();
      await c.closed;
    });

    it("waits for a slow upgrade answer as long as the WebSocket timeout allows, not the header timeout", async () => {
      // answers the handshake after 700 ms: past headersMs (400), within wsConnectMs (2000)
      const late = Bun.listen({
        hostname: "127.0.0.1",
        port: 0,
        socket: {
          data(s, d) {
            const key = /sec-websocket-key: *(\S+)/i.exec(d.toString())?.[1] ?? "";
            const accept = new Bun.CryptoHasher("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
            setTimeout(() => {
              s.write(
                `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`,
              );
            }, 700);
          },
        },
      });
      const h = createProxyHandler({
        table: () =>
          buildRouteTable({
            apps: [app("late", [{ hosts: ["late.test"] }])],
            upstreams: () => [`127.0.0.1:${late.port}`],
            defaults: { ratelimit: { requests: 1000, windowMs: 60_000, burst: 1000, by: "ip" } },
          }),
        stats: new RequestStats(),
        log: new LogSink({ stdout: false }).logger("proxy"),
        proxyToken: "t",
        timeouts: { headersMs: 400, wsConnectMs: 2000 },
      });
      const p = await serve(h, kind === "tls");
      try {
        const ws = new WebSocket(`${wsScheme}://127.0.0.1:${p.port}/`, {
          ...insecure,
          headers: { host: "late.test" },
        } as unknown as string[]);
        const opened = await new Promise<boolean>((resolve) => {
          ws.onopen = () => resolve(true);
          ws.onerror = () => resolve(false);
        });
        expect(opened).toBe(true);
        ws.close();
      } finally {
        await p.stop(true);
        late.stop(true);
      }
    });

    it("answers 502 when the upstream cannot be dialled", async () => {
      const r = await get("refused.test", "/", {
        headers: {
          upgrade: "websocket",
          connection: "Upgrade",
          "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
          "sec-websocket-version": "13",
        },
      });
      expect(r.status).toBe(502);
    });
  });

  describe("request stats", () => {
    it("counts every app request with status and normalised path", async () => {
      const batches = stats.drain({ all: true });
      const echo = batches.filter((b) => b.app === "echo");
      const count = echo.reduce((n, b) => n + b.count, 0);
      expect(count).toBeGreaterThan(10);
      const limited = batches.find((b) => b.app === "limited")!;
      expect(limited.statuses["429"]).toBe(1);
      expect(batches.find((b) => b.app === "deny")!.statuses["403"]).toBe(1);
      expect(batches.some((b) => b.app === "ws" && b.statuses["101"] > 0)).toBe(true);
      expect(batches.every((b) => b.app !== "")).toBe(true);
    });
  });
}
