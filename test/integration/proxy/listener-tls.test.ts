/**
 * The TLS listener without a CA, fed by a hand-driven CertSource: SNI per host (wildcards included), a TLS-ALPN-01
 * challenge presented to acme-tls/1 clients only while everyone else is served as before (HTTP and WebSocket, with
 * their own address), certificate changes taking effect on the next handshake with requests in flight kept, and
 * bad input (an unusable certificate, plain HTTP on the TLS port) refused without harm.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { X509Certificate } from "node:crypto";
import { type ConnectionOptions, connect } from "node:tls";
import { CidrSet } from "../../../src/lib/net";
import { LogSink } from "../../../src/log/logger";
import { makeAlpnCertificate } from "../../../src/proxy/certs/local-ca";
import type { KeyPair } from "../../../src/proxy/certs/store";
import { type Listeners, startListeners } from "../../../src/proxy/listeners";
import type { AlpnChallenge, CertSource, SniEntry } from "../../../src/proxy/types";
import { until } from "../../helpers/http";
import { echoHandler, fetchTls, opensslCa, opensslCert, type PemPair, sClient } from "../../helpers/tls";
import { tempDir } from "../../helpers/tmp";

const sink = new LogSink({ stdout: false });
const log = sink.logger("proxy");
const dir = tempDir();
const ca = opensslCa(dir, "Window CA");
const fallback = opensslCert(dir, { sans: ["fallback.invalid"], ca });
const app1 = opensslCert(dir, { sans: ["app.test"], ca });
const app2 = opensslCert(dir, { sans: ["app.test"], ca });
const wild = opensslCert(dir, { sans: ["*.wild.test"], ca });
const echo = echoHandler();

/** A CertSource the test drives by hand. */
class HandSource implements CertSource {
  entries: SniEntry[] = [];
  challenges: AlpnChallenge[] = [];
  private fns = new Set<() => void>();
  sni = () => this.entries;
  fallback = (): SniEntry => ({ serverName: "", key: fallback.key, cert: fallback.cert });
  onChange(fn: () => void) {
    this.fns.add(fn);
    return () => this.fns.delete(fn);
  }
  http01 = () => null;
  alpnChallenges = () => this.challenges;
  serve(host: string, pair: PemPair, more: SniEntry[] = []) {
    this.entries = [{ serverName: host, key: pair.key, cert: pair.cert }, ...more];
    this.changed();
  }
  challenge(host: string, pair: KeyPair | null) {
    this.challenges = pair ? [{ host, ...pair }] : [];
    this.changed();
  }
  changed() {
    for (const fn of this.fns) fn();
  }
}

const source = new HandSource();
let listeners: Listeners;
let port: number;
let challenge: KeyPair;

/** A raw HTTPS request from another loopback address (127.0.0.2 unless told), to see the address the app is told. */
function fromOtherAddress(path: string, headers = "", localAddress = "127.0.0.2"): Promise<string> {
  return new Promise((resolve, reject) => {
    const opts = { host: "127.0.0.1", port, localAddress, servername: "app.test", ca: ca.cert };
    const sock = connect(opts as ConnectionOptions);
    let body = "";
    sock.on("secureConnect", () => sock.write(`GET ${path} HTTP/1.1\r\nhost: app.test\r\nconnection: close\r\n${headers}\r\n`));
    sock.on("data", (d) => (body += d));
    sock.on("end", () => resolve(body.slice(body.indexOf("\r\n\r\n") + 4)));
    sock.on("error", reject);
  });
}

beforeAll(async () => {
  source.serve("app.test", app1);
  challenge = await makeAlpnCertificate("chal.test", "token.thumbprint");
  listeners = await startListeners({
    config: { listenAddr: "127.0.0.1:0", httpListenAddr: "", mode: "auto" },
    handler: echo.handler,
    certs: source,
    log,
    trusted: new CidrSet(["127.0.0.9"]),
  });
  port = listeners.ports().main;
});

afterAll(async () => {
  echo.release();
  await listeners?.stop(true);
  echo.stop();
});

describe("TLS listener", () => {
  it("serves each host its certificate and the client's own address, with no ALPN challenge pending", async () => {
    expect(listeners.state()).toBe("tls");
    expect(JSON.parse(await fromOtherAddress("/direct?x=1"))).toMatchObject({
      host: "app.test",
      path: "/direct",
      query: "?x=1",
      clientIp: "127.0.0.2",
      secure: true,
    });
    expect((await sClient(port, "app.test")).fingerprint).toBe(new X509Certificate(app1.cert).fingerprint256);
    const served = await sClient(port, "chal.test", { alpn: "acme-tls/1" });
    expect(served.alpn).toBeNull();
    expect(served.sans).toEqual(["fallback.invalid"]);
  });

  it("presents a pending challenge's certificate only to acme-tls/1 clients, keeping requests in flight", async () => {
    const held = fetchTls(port, "app.test", "/hold", ca.cert);
    await until(() => echo.holding() === 1, { what: "the held request" });
    source.challenge("chal.test", challenge);
    await listeners.settled();

    const validator = await sClient(port, "chal.test", { alpn: "acme-tls/1" });
    expect(validator.alpn).toBe("acme-tls/1");
    expect(validator.fingerprint).toBe(new X509Certificate(challenge.cert).fingerprint256);
    // a browser visiting the same name does not get the challenge certificate
    const browser = await sClient(port, "chal.test", { alpn: "h2,http/1.1" });
    expect(browser.sans).toEqual(["fallback.invalid"]);
    expect(browser.alpn).toBeNull();
    const other = await sClient(port, "app.test", { alpn: "acme-tls/1" });
    expect(other.sans).toEqual(["app.test"]);
    expect(other.alpn).toBeNull();
    expect(JSON.parse(await fromOtherAddress("/during"))).toMatchObject({ clientIp: "127.0.0.2", secure: true });

    echo.release();
    expect((await held).status).toBe(200);
  });

  it("believes X-Forwarded-For only from trusted proxies", async () => {
    const xff = "x-forwarded-for: 203.0.113.7\r\n";
    expect(JSON.parse(await fromOtherAddress("/", xff))).toMatchObject({ clientIp: "127.0.0.2", xff: "127.0.0.2" });
    expect(JSON.parse(await fromOtherAddress("/", xff, "127.0.0.9"))).toMatchObject({
      clientIp: "203.0.113.7",
      xff: "203.0.113.7",
    });
  });

  it("proxies WebSockets over TLS", async () => {
    const ws = new WebSocket(`wss://127.0.0.1:${port}/ws`, {
      headers: { host: "app.test" },
      tls: { ca: ca.cert, serverName: "app.test" },
    } as unknown as string[]);
    const reply = new Promise<string>((resolve, reject) => {
      ws.onmessage = (e) => resolve(String(e.data));
      ws.onerror = () => reject(new Error("websocket failed"));
    });
    ws.onopen = () => ws.send("ping");
    expect(await reply).toBe(`${JSON.stringify({ clientIp: "127.0.0.1", secure: true, xff: "127.0.0.1" })} ping`);
    ws.close();
  });

  it("serves a changed certificate from the next handshake on, on the same listener", async () => {
    const before = (await sClient(port, "app.test")).fingerprint;
    source.serve("app.test", app2);
    await listeners.settled();
    const after = await sClient(port, "app.test");
    expect(after.fingerprint).not.toBe(before);
    expect(after.fingerprint).toBe(new X509Certificate(app2.cert).fingerprint256);
    expect(listeners.ports().main).toBe(port);
    expect((await fetchTls(port, "app.test", "/", ca.cert)).status).toBe(200);
  });

  it("stops presenting the challenge once it is done", async () => {
    source.challenge("chal.test", null);
    await listeners.settled();
    const served = await sClient(port, "chal.test", { alpn: "acme-tls/1" });
    expect(served.alpn).toBeNull();
    expect(served.sans).toEqual(["fallback.invalid"]);
  });

  it("serves a wildcard certificate for one more label only", async () => {
    source.serve("app.test", app2, [{ serverName: "*.wild.test", key: wild.key, cert: wild.cert }]);
    await listeners.settled();
    expect((await sClient(port, "a.wild.test")).sans).toEqual(["*.wild.test"]);
    expect((await sClient(port, "A.Wild.Test")).sans).toEqual(["*.wild.test"]);
    expect((await sClient(port, "b.a.wild.test")).sans).toEqual(["fallback.invalid"]);
    expect((await sClient(port, "wild.test")).sans).toEqual(["fallback.invalid"]);
    const res = await fetchTls(port, "x.wild.test", "/w", ca.cert);
    expect(await res.json()).toMatchObject({ host: "x.wild.test", path: "/w" });
  });

  it("skips an unusable certificate and keeps serving the others", async () => {
    const lines: string[] = [];
    const unsubscribe = sink.subscribe((l) => lines.push(l));
    source.serve("app.test", app2, [{ serverName: "bad.test", key: app1.key, cert: "not a certificate" }]);
    await listeners.settled();
    expect((await sClient(port, "app.test")).fingerprint).toBe(new X509Certificate(app2.cert).fingerprint256);
    expect((await sClient(port, "bad.test")).sans).toEqual(["fallback.invalid"]);
    unsubscribe();
    expect(lines.some((l) => l.includes("certificate unusable, not served") && l.includes("bad.test"))).toBe(true);
  });

  it("drops plain HTTP sent to the TLS port and keeps serving", async () => {
    let closed!: () => void;
    const gone = new Promise<boolean>((resolve) => {
      closed = () => resolve(true);
      setTimeout(() => resolve(false), 3000);
    });
    const sock = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, close: () => closed() } });
    sock.write("GET / HTTP/1.1\r\nhost: app.test\r\n\r\n");
    expect(await gone).toBe(true);
    expect((await fetchTls(port, "app.test", "/", ca.cert)).status).toBe(200);
  });
});
