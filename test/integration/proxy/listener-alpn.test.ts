/**
 * The ALPN window without a CA: a hand-fed CertSource publishes a TLS-ALPN-01 challenge and the listeners must present
 * it to acme-tls/1 clients only, keep serving everyone else (HTTP and WebSocket, with their real address), survive a
 * certificate change inside the window, and go back to a plain Bun.serve TLS listener afterwards.
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

const log = new LogSink({ stdout: false }).logger("proxy");
const dir = tempDir();
const ca = opensslCa(dir, "Window CA");
const fallback = opensslCert(dir, { sans: ["fallback.invalid"], ca });
const app1 = opensslCert(dir, { sans: ["app.test"], ca });
const app2 = opensslCert(dir, { sans: ["app.test"], ca });
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
  serve(host: string, pair: PemPair) {
    this.entries = [{ serverName: host, key: pair.key, cert: pair.cert }];
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

/** A raw HTTPS request from another loopback address (127.0.0.2), to tell the client's address from the relay's. */
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
});

describe("ALPN window", () => {
  it("serves directly through Bun.serve while no challenge is pending", async () => {
    expect(listeners.state()).toBe("tls");
    expect(JSON.parse(await fromOtherAddress("/direct"))).toMatchObject({ clientIp: "127.0.0.2", secure: true });
    const served = await sClient(port, "chal.test", { alpn: "acme-tls/1" });
    expect(served.alpn).toBeNull(); // Bun.serve never negotiates ALPN
  });

  it("opens for a challenge and presents its certificate only to acme-tls/1 clients", async () => {
    const held = fetchTls(port, "app.test", "/hold", ca.cert);
    await until(() => echo.holding() === 1, { what: "the held request" });
    source.challenge("chal.test", challenge);
    await listeners.settled();
    expect(listeners.state()).toBe("alpn-window");

    const validator = await sClient(port, "chal.test", { alpn: "acme-tls/1" });
    expect(validator.alpn).toBe("acme-tls/1");
    expect(validator.fingerprint).toBe(new X509Certificate(challenge.cert).fingerprint256);
    // a browser visiting the same name does not get the challenge certificate
    const browser = await sClient(port, "chal.test", { alpn: "h2,http/1.1" });
    expect(browser.sans).toEqual(["fallback.invalid"]);
    const other = await sClient(port, "app.test", { alpn: "acme-tls/1" });
    expect(other.sans).toEqual(["app.test"]);
    expect(other.alpn).toBeNull();

    echo.release();
    expect((await held).status).toBe(200);
  });

  it("relays everyone else with their own address and TLS", async () => {
    expect(JSON.parse(await fromOtherAddress("/relayed?x=1"))).toMatchObject({
      host: "app.test",
      path: "/relayed",
      query: "?x=1",
      clientIp: "127.0.0.2",
      secure: true,
    });
    const res = await fetchTls(port, "app.test", "/again", ca.cert);
    expect(await res.json()).toMatchObject({ clientIp: "127.0.0.1", secure: true });
  });

  it("believes X-Forwarded-For only from trusted proxies, through the relay too", async () => {
    const xff = "x-forwarded-for: 203.0.113.7\r\n";
    expect(JSON.parse(await fromOtherAddress("/", xff))).toMatchObject({ clientIp: "127.0.0.2", trustForwarded: false });
    expect(JSON.parse(await fromOtherAddress("/", xff, "127.0.0.9"))).toMatchObject({
      clientIp: "203.0.113.7",
      trustForwarded: true,
    });
  });

  it("relays WebSockets", async () => {
    const ws = new WebSocket(`wss://127.0.0.1:${port}/ws`, {
      headers: { host: "app.test" },
      tls: { ca: ca.cert, serverName: "app.test" },
    } as unknown as string[]);
    const reply = new Promise<string>((resolve, reject) => {
      ws.onmessage = (e) => resolve(String(e.data));
      ws.onerror = () => reject(new Error("websocket failed"));
    });
    ws.onopen = () => ws.send("ping");
    expect(await reply).toBe(`${JSON.stringify({ clientIp: "127.0.0.1", secure: true, trustForwarded: false })} ping`);
    ws.close();
  });

  it("serves a certificate that changes while it is open", async () => {
    const before = (await sClient(port, "app.test")).fingerprint;
    source.serve("app.test", app2);
    await listeners.settled();
    expect(listeners.state()).toBe("alpn-window");
    const after = await sClient(port, "app.test");
    expect(after.fingerprint).not.toBe(before);
    expect(after.fingerprint).toBe(new X509Certificate(app2.cert).fingerprint256);
    expect((await fetchTls(port, "app.test", "/", ca.cert)).status).toBe(200);
  });

  it("closes when the challenge is done, keeping requests that were in flight", async () => {
    const held = fetchTls(port, "app.test", "/hold", ca.cert);
    await until(() => echo.holding() === 1, { what: "the held request" });
    source.challenge("chal.test", null);
    await listeners.settled();
    expect(listeners.state()).toBe("tls");
    const served = await sClient(port, "chal.test", { alpn: "acme-tls/1" });
    expect(served.alpn).toBeNull();
    expect(served.sans).toEqual(["fallback.invalid"]);
    expect(JSON.parse(await fromOtherAddress("/direct"))).toMatchObject({ clientIp: "127.0.0.2" });
    echo.release();
    expect((await held).status).toBe(200);
  });
});
