/**
 * The SSRF corpus through the real delivery client with allow_private_destinations off: literal addresses of every
 * refused range in every spelling, names resolving to them, a resolver that answers public first and private later,
 * redirects; a listener on 127.0.0.1 counts the connections that got through, and must count zero. Then what the
 * client does with a reachable receiver: the address it dials, SNI and Host, deadlines, the body cap, retries.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createSafeHttp,
  DELIVERY_LIMITS,
  type PostResult,
  RETRY_DELAYS_MS,
  withRetries,
} from "../../../../src/modules/webhooks/safe-http";
import { opensslCa, opensslCert } from "../../../helpers/tls";
import { type CountingListener, countingListener, webhookReceiver } from "../../../helpers/webhook-receiver";

const BODY = JSON.stringify({ event: "test" });

/** Every spelling of an IPv4 address the WHATWG parser accepts, and the IPv6 forms that carry it. */
function spellings(ip: string): string[] {
  const [a, b, c, d] = ip.split(".").map(Number);
  const n = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
  const oct = (x: number) => `0${x.toString(8)}`;
  const hex = (x: number) => `0x${x.toString(16)}`;
  const h16 = (x: number, y: number) => ((x << 8) + y).toString(16);
  return [
    ip,
    `${ip}.`,
    String(n),
    `0${n.toString(8)}`,
    hex(n),
    `${oct(a)}.${oct(b)}.${oct(c)}.${oct(d)}`,
    `${hex(a)}.${hex(b)}.${hex(c)}.${hex(d)}`,
    `${a}.${(b << 16) + (c << 8) + d}`,
    `${a}.${b}.${(c << 8) + d}`,
    `${hex(a)}.${b}.${oct(c)}.${d}`,
    `[::ffff:${ip}]`,
    `[::ffff:${h16(a, b)}:${h16(c, d)}]`,
    `[0:0:0:0:0:ffff:${ip}]`,
    `[64:ff9b::${ip}]`,
    `[64:ff9b::${h16(a, b)}:${h16(c, d)}]`,
  ];
}

/** One address of each refused IPv4 block. */
const REFUSED_V4 = [
  "127.0.0.1",
  "127.1.2.3",
  "0.0.0.0",
  "10.0.0.1",
  "172.16.0.1",
  "172.31.255.254",
  "192.168.1.1",
  "100.64.0.1",
  "169.254.169.254",
  "192.0.0.1",
  "192.0.2.1",
  "198.18.0.1",
  "198.51.100.1",
  "203.0.113.1",
  "224.0.0.1",
  "239.255.255.250",
  "240.0.0.1",
  "255.255.255.255",
];

const REFUSED_V6 = [
  "[::1]",
  "[::]",
  "[0:0:0:0:0:0:0:1]",
  "[::127.0.0.1]",
  "[fe80::1]",
  "[fc00::1]",
  "[fd00::1]",
  "[ff02::1]",
  "[2001:db8::1]",
  "[2001::1]",
  "[2002:7f00:1::]",
  "[64:ff9b:1::7f00:1]",
  "[::ffff:0:7f00:1]",
];

let trap: CountingListener;
beforeAll(async () => {
  trap = await countingListener("127.0.0.1");
});
afterAll(() => trap.close());

/** A resolver that must never be asked (literal hosts are not resolved). */
const noResolve = async (host: string): Promise<string[]> => {
  throw new Error(`resolver asked for ${host}`);
};

function expectRefused(r: PostResult) {
  expect(r.ok).toBe(false);
  expect(r.status).toBe(0);
  expect(r.retry).toBe(false);
  expect(r.error).toMatch(/^destination address \S+ refused \(/);
}

describe("literal addresses, allow_private_destinations off", () => {
  const http = createSafeHttp({ allowPrivate: false, resolve: noResolve });
  const hosts = [...REFUSED_V4.flatMap(spellings), ...REFUSED_V6];

  it.each(hosts)("refuses http://%s", async (host) => {
    expectRefused(await http.post(`http://${host}:${trap.port}/hook`, BODY));
    expectRefused(await http.post(`https://${host}:${trap.port}/hook`, BODY));
  });

  it("covers every spelling of 127.0.0.1 that reaches the listener, and the listener counted none of them", async () => {
    expect(hosts.length).toBeGreaterThan(250);
    // the same spellings do reach it when the policy allows loopback: the corpus would have hit a live listener
    const open = createSafeHttp({ allowPrivate: true, resolve: noResolve });
    const before = trap.connections;
    expect(before).toBe(0);
    const reached = await open.post(`http://0x7f.1:${trap.port}/hook`, BODY);
    expect(reached).toMatchObject({ ok: true, status: 200, address: "127.0.0.1" });
    expect(trap.connections).toBe(1);
    trap = await trap.close().then(() => countingListener("127.0.0.1"));
  });
});

describe("names resolving to refused addresses", () => {
  const answers: Record<string, string[]> = {
    "loop.test": ["127.0.0.1"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "mapped-hex.test": ["::ffff:7f00:1"],
    "nat64.test": ["64:ff9b::7f00:1"],
    "six.test": ["::1"],
    "meta.test": ["169.254.169.254"],
    "lan.test": ["192.168.0.10"],
    "cgnat.test": ["100.100.100.100"],
    "ula.test": ["fd00::5"],
    "mixed.test": ["93.184.215.14", "127.0.0.1"],
    "mixed6.test": ["2606:4700:4700::1111", "::1"],
    "octal-answer.test": ["0177.0.0.1"],
    "zero.test": ["0.0.0.0"],
  };
  const asked: string[] = [];
  const http = createSafeHttp({
    allowPrivate: false,
    resolve: async (host) => {
      asked.push(host);
      return answers[host] ?? [];
    },
  });

  it.each(Object.keys(answers))("refuses %s", async (name) => {
    expectRefused(await http.post(`http://${name}:${trap.port}/hook`, BODY));
    expect(asked.at(-1)).toBe(name);
  });

  it("refuses localhost through the system resolver", async () => {
    const system = createSafeHttp({ allowPrivate: false });
    expectRefused(await system.post(`http://localhost:${trap.port}/hook`, BODY));
    expectRefused(await system.post(`http://LocalHost:${trap.port}/hook`, BODY));
    // with a trailing dot getaddrinfo may not find it at all; either way nothing is sent
    expect((await system.post(`http://localhost.:${trap.port}/hook`, BODY)).ok).toBe(false);
  });

  it("reports a name that does not resolve as retryable", async () => {
    const r = await http.post(`http://nowhere.test:${trap.port}/`, BODY);
    expect(r).toMatchObject({ ok: false, status: 0, retry: true, error: "cannot resolve nowhere.test: no addresses" });
  });

  it("counted no connection on the listener", () => {
    expect(trap.connections).toBe(0);
  });
});

describe("a resolver that changes its answer", () => {
  it("connects to the address it checked: public at check time, private afterwards reaches nothing", async () => {
    let calls = 0;
    const http = createSafeHttp({
      allowPrivate: false,
      resolve: async () => (++calls === 1 ? ["93.184.215.14"] : ["127.0.0.1"]),
      limits: { connectMs: 200, totalMs: 500 },
    });
    const r = await http.post(`http://rebind.test:${trap.port}/hook`, BODY);
    expect(calls).toBe(1);
    expect(r.ok).toBe(false);
    expect(r.address).toBe("93.184.215.14");
    // a retry asks again, sees the private answer and refuses it
    const again = await http.post(`http://rebind.test:${trap.port}/hook`, BODY);
    expectRefused(again);
    expect(trap.connections).toBe(0);
  });

  it("dials the first answer even when the name points elsewhere by the time it connects", async () => {
    const first = await countingListener("127.0.0.2");
    const second = await countingListener("127.0.0.1", first.port);
    let calls = 0;
    const http = createSafeHttp({ allowPrivate: true, resolve: async () => (++calls === 1 ? ["127.0.0.2"] : ["127.0.0.1"]) });
    const r = await http.post(`http://rebind.test:${first.port}/hook`, BODY);
    expect(r).toMatchObject({ ok: true, status: 200, address: "127.0.0.2" });
    expect(calls).toBe(1);
    expect(first.connections).toBe(1);
    expect(second.connections).toBe(0);
    await first.close();
    await second.close();
  });
});

describe("redirects", () => {
  it("does not follow a redirect to a loopback receiver", async () => {
    const redirector = webhookReceiver(
      (req) =>
        new Response(null, {
          status: Number(req.path.split("s=")[1]),
          headers: { location: `http://127.0.0.1:${trap.port}/hook` },
        }),
    );
    const http = createSafeHttp({ allowPrivate: true });
    for (const status of [301, 302, 303, 307, 308]) {
      const r = await http.post(redirector.url(`/hook?s=${status}`), BODY);
      expect(r).toMatchObject({ ok: false, status, error: `redirect not followed (${status})`, retry: false });
    }
    expect(redirector.received.length).toBe(5);
    expect(trap.connections).toBe(0);
    redirector.stop();
  });
});

describe("deadlines and caps", () => {
  it("uses the spec's limits: 10 s overall, 5 s TLS handshake, 10 s to the response head, 3 attempts", () => {
    expect(DELIVERY_LIMITS).toMatchObject({ totalMs: 10_000, tlsMs: 5_000, headersMs: 10_000 });
    expect(RETRY_DELAYS_MS.length + 1).toBe(3);
  });

  it("gives up on a receiver that never answers once the response-head deadline passes", async () => {
    const silent = await countingListener("127.0.0.1", 0, "silent");
    const http = createSafeHttp({ allowPrivate: true, limits: { headersMs: 300, totalMs: 2_000 } });
    const t0 = Date.now();
    const r = await http.post(`http://127.0.0.1:${silent.port}/`, BODY);
    expect(r).toMatchObject({ ok: false, status: 0, retry: true, error: "no response headers within 300 ms" });
    expect(Date.now() - t0).toBeLessThan(1_500);
    await silent.close();
  });

  it("bounds the whole exchange by the overall deadline", async () => {
    const silent = await countingListener("127.0.0.1", 0, "silent");
    const http = createSafeHttp({ allowPrivate: true, limits: { headersMs: 5_000, totalMs: 300 } });
    const r = await http.post(`http://127.0.0.1:${silent.port}/`, BODY);
    expect(r.error).toBe("timed out after 300 ms");
    await silent.close();
  });

  it("gives up on a TLS handshake that never completes", async () => {
    const silent = await countingListener("127.0.0.1", 0, "silent");
    const http = createSafeHttp({ allowPrivate: true, limits: { tlsMs: 300 } });
    const r = await http.post(`https://127.0.0.1:${silent.port}/`, BODY);
    expect(r).toMatchObject({ ok: false, retry: true, error: "tls handshake timed out after 300 ms" });
    await silent.close();
  });

  it("stops reading a body that never ends and still reports the status", async () => {
    const hang = await countingListener("127.0.0.1", 0, "hang-body");
    const http = createSafeHttp({ allowPrivate: true, limits: { totalMs: 400 } });
    expect(await http.post(`http://127.0.0.1:${hang.port}/`, BODY)).toMatchObject({ ok: true, status: 200 });
    await hang.close();
  });

  it("reads at most the body cap of an error answer and keeps a short excerpt", async () => {
    const big = webhookReceiver(() => new Response("e".repeat(1024 * 1024), { status: 400 }));
    const http = createSafeHttp({ allowPrivate: true, limits: { maxBodyBytes: 1024 } });
    const r = await http.post(big.url(), BODY);
    expect(r.status).toBe(400);
    expect(r.retry).toBe(false);
    expect(r.error).toStartWith("receiver answered 400: eeee");
    expect(r.error.length).toBeLessThan(240);
    big.stop();
  });

  it("reports a refused connection as retryable", async () => {
    const gone = await countingListener("127.0.0.1");
    await gone.close();
    const r = await createSafeHttp({ allowPrivate: true }).post(`http://127.0.0.1:${gone.port}/`, BODY);
    expect(r).toMatchObject({ ok: false, status: 0, retry: true, error: "connection refused" });
  });
});

describe("what a receiver sees", () => {
  it("gets a POST with Host, JSON and the extra headers, to the URL's path and query", async () => {
    const rx = webhookReceiver();
    const http = createSafeHttp({ allowPrivate: true, resolve: async () => ["127.0.0.1"] });
    const r = await http.post(`http://hooks.example.test:${rx.port}/in/abc?x=1`, BODY, { "X-Extra": "1" });
    expect(r).toMatchObject({ ok: true, status: 200 });
    expect(rx.received[0]).toMatchObject({ method: "POST", path: "/in/abc?x=1", body: BODY });
    expect(rx.received[0].headers).toMatchObject({
      host: `hooks.example.test:${rx.port}`,
      "content-type": "application/json",
      "x-extra": "1",
    });
    rx.stop();
  });

  it("refuses header values that would split the request", async () => {
    const http = createSafeHttp({ allowPrivate: true });
    const r = await http.post(`http://127.0.0.1:${trap.port}/`, BODY, { "X-A": "1\r\nX-B: 2" });
    expect(r).toMatchObject({ ok: false, retry: false, error: "invalid header X-A" });
  });

  it("speaks TLS with the URL's name as SNI and checks the certificate against it, on the checked address", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sundeck-webhook-tls-"));
    const ca = opensslCa(dir);
    const leaf = opensslCert(dir, { sans: ["hooks.example.test"], ca });
    const rx = webhookReceiver(undefined, { cert: leaf.cert, key: leaf.key });
    const http = createSafeHttp({ allowPrivate: true, resolve: async () => ["127.0.0.1"], limits: { ca: [ca.cert] } });
    const ok = await http.post(`https://hooks.example.test:${rx.port}/hook`, BODY);
    expect(ok).toMatchObject({ ok: true, status: 200, address: "127.0.0.1" });
    expect(rx.received[0].headers.host).toBe(`hooks.example.test:${rx.port}`);
    const wrong = await http.post(`https://other.example.test:${rx.port}/hook`, BODY);
    expect(wrong.ok).toBe(false);
    expect(wrong.error).toStartWith("tls handshake failed:");
    expect(rx.received.length).toBe(1);
    rx.stop();
  });
});

describe("retries", () => {
  const result = (over: Partial<PostResult>): PostResult => ({
    ok: false,
    status: 0,
    error: "x",
    address: null,
    retry: true,
    ...over,
  });

  it("retries a 5xx with 1 s then 5 s of backoff and stops at the first success", async () => {
    const rx = webhookReceiver((_, n) => new Response(null, { status: n < 3 ? 503 : 200 }));
    const http = createSafeHttp({ allowPrivate: true });
    const waits: number[] = [];
    const out = await withRetries(
      () => http.post(rx.url(), BODY),
      RETRY_DELAYS_MS,
      async (ms) => void waits.push(ms),
    );
    expect(out).toMatchObject({ attempts: 3, result: { ok: true, status: 200 } });
    expect(waits).toEqual([1_000, 5_000]);
    rx.stop();
  });

  it("never retries a 4xx, a redirect or a refused address", async () => {
    for (const r of [result({ status: 404, retry: false }), result({ status: 302, retry: false }), result({ retry: false })]) {
      let calls = 0;
      const out = await withRetries(
        async () => {
          calls++;
          return r;
        },
        [1, 1],
        async () => {},
      );
      expect(out.attempts).toBe(1);
      expect(calls).toBe(1);
    }
  });

  it("gives up after the last attempt of a network error", async () => {
    let calls = 0;
    const out = await withRetries(
      async () => {
        calls++;
        return result({});
      },
      [1, 1],
      async () => {},
    );
    expect(out).toMatchObject({ attempts: 3, result: { ok: false } });
    expect(calls).toBe(3);
  });
});
