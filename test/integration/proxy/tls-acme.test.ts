/**
 * ACME against Debian's pebble through our own listeners: HTTP-01 on the plain listener, TLS-ALPN-01 on the TLS
 * listener with the plain listener disabled, persistence across a manager restart, and renewals under load.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { LogSink } from "../../../src/log/logger";
import { type CertManager, createCertManager } from "../../../src/proxy/certs/manager";
import { createCertStore } from "../../../src/proxy/certs/store";
import { type Listeners, startListeners } from "../../../src/proxy/listeners";
import { until } from "../../helpers/http";
import { freePort, type Pebble, startPebble } from "../../helpers/pebble";
import { echoHandler, fetchTls, opensslVerify, sClient } from "../../helpers/tls";
import { tempDir } from "../../helpers/tmp";

const sink = new LogSink({ stdout: false, level: "debug" });
const lines: string[] = [];
sink.subscribe((l) => lines.push(l));
const log = sink.logger("proxy");
const dir = tempDir();
const echo = echoHandler();

let pebble: Pebble;
let root: string;
let tlsPort: number;
let httpPort: number;
let listeners: Listeners | undefined;
const managers: CertManager[] = [];

async function open(challenges: Array<"http-01" | "tls-alpn-01">, plain: boolean): Promise<CertManager> {
  const m = await createCertManager({
    store: createCertStore(dir),
    log,
    mode: "auto",
    email: "ops@example.com",
    directoryUrl: pebble.directoryUrl,
    caTrust: pebble.httpsCa,
    challenges,
    tlsProbe: () => listeners?.probe(),
    hostname: "acmebox",
  });
  managers.push(m);
  listeners = await startListeners({
    config: { listenAddr: `127.0.0.1:${tlsPort}`, httpListenAddr: plain ? `127.0.0.1:${httpPort}` : "", mode: "auto" },
    handler: echo.handler,
    certs: m,
    log,
  });
  return m;
}

async function close(m: CertManager) {
  m.stop();
  await listeners?.stop(true);
  listeners = undefined;
}

/**
 * Run `clients` request loops against `host` until `during` has finished and each loop made a few more requests;
 * returns the count of answered and failed requests.
 */
async function underLoad(host: string, during: () => Promise<void>, clients = 20) {
  const stats = { ok: 0, failed: 0, errors: [] as string[] };
  let done = false;
  const loop = async () => {
    let after = 0;
    while (!done || after < 5) {
      if (done) after++;
      try {
        const res = await fetchTls(tlsPort, host, "/load", root);
        await res.arrayBuffer();
        if (res.status === 200) stats.ok++;
        else {
          stats.failed++;
          stats.errors.push(`status ${res.status}`);
        }
      } catch (e) {
        stats.failed++;
        stats.errors.push(String(e));
      }
    }
  };
  const loops = Array.from({ length: clients }, loop);
  await until(() => stats.ok >= clients * 5, { timeout: 10_000, what: "load to start" });
  try {
    await during();
  } finally {
    done = true;
    await Promise.all(loops);
  }
  return stats;
}

beforeAll(async () => {
  [tlsPort, httpPort] = [await freePort(), await freePort()];
  pebble = await startPebble({ httpPort, tlsPort });
  root = await pebble.root();
});

afterAll(async () => {
  for (const m of managers) m.stop();
  await listeners?.stop(true);
  await pebble?.stop();
});

describe("HTTP-01 through the plain listener", () => {
  let m: CertManager;
  beforeAll(async () => {
    m = await open(["http-01"], true);
  });
  afterAll(async () => close(m));

  it("issues a certificate and serves it for its host", async () => {
    const started = Date.now();
    await m.setHosts([{ host: "web.test", tls: "auto", app: "web" }]);
    expect(m.certInfo("web.test")).toMatchObject({ status: "pending", source: "fallback" });
    await until(() => m.certInfo("web.test")?.status === "issued", { timeout: 30_000, what: "web.test issued" });
    console.log(`http-01 issuance took ${Date.now() - started} ms`);
    await listeners!.settled();
    const served = await sClient(tlsPort, "web.test");
    expect(served.issuer).toContain("Pebble Intermediate CA");
    expect(served.sans).toEqual(["web.test"]);
    expect(opensslVerify(served, root, "web.test")).toMatchObject({ ok: true });
    expect(m.certInfo("web.test")).toMatchObject({ mode: "auto", source: "acme", error: null });
    expect(lines.some((l) => l.includes("tls-alpn-01 challenge answered"))).toBe(false);
    const res = await fetchTls(tlsPort, "web.test", "/hi", root);
    expect(await res.json()).toMatchObject({ host: "web.test", secure: true, clientIp: "127.0.0.1" });
  });

  it("persists the account key and certificate with private modes", () => {
    const certs = join(dir, "certs");
    for (const f of ["acme/account.key", "acme/web.test/cert.pem", "acme/web.test/key.pem"]) {
      expect(existsSync(join(certs, f))).toBe(true);
      expect(statSync(join(certs, f)).mode & 0o777).toBe(0o600);
    }
    expect(statSync(join(certs, "acme")).mode & 0o777).toBe(0o700);
  });

  it("renews under load with no failed request, new connections seeing the new certificate", async () => {
    const before = (await sClient(tlsPort, "web.test")).fingerprint;
    const stats = await underLoad("web.test", async () => {
      await m.renew("web.test");
      await listeners!.settled();
    });
    console.log(`http-01 renewal under load: ${stats.ok} ok, ${stats.failed} failed`, stats.errors.slice(0, 3));
    expect(stats.failed).toBe(0);
    const after = await sClient(tlsPort, "web.test");
    expect(after.fingerprint).not.toBe(before);
    expect(after.issuer).toContain("Pebble Intermediate CA");
  });
});

describe("TLS-ALPN-01 through the TLS listener, plain listener disabled", () => {
  let m: CertManager;
  beforeAll(async () => {
    m = await open(["tls-alpn-01"], false);
  });
  afterAll(async () => close(m));

  it("issues a certificate while each host keeps its own", async () => {
    expect(listeners!.ports().plain).toBeNull();
    const issuedBefore = pebble.issued();
    const started = Date.now();
    await m.setHosts([
      { host: "web.test", tls: "auto", app: "web" },
      { host: "api.test", tls: "auto", app: "api" },
    ]);
    // web.test comes from disk: no order for it
    expect(m.certInfo("web.test")).toMatchObject({ status: "issued", source: "acme" });
    await until(() => m.certInfo("api.test")?.status === "issued", { timeout: 30_000, what: "api.test issued" });
    console.log(`tls-alpn-01 issuance took ${Date.now() - started} ms`);
    expect(pebble.issued()).toBe(issuedBefore + 1);
    expect(lines.some((l) => l.includes("tls-alpn-01 challenge answered") && l.includes("host=api.test"))).toBe(true);
    await listeners!.settled();
    const api = await sClient(tlsPort, "api.test");
    const web = await sClient(tlsPort, "web.test");
    expect(api.sans).toEqual(["api.test"]);
    expect(web.sans).toEqual(["web.test"]);
    for (const [s, h] of [
      [api, "api.test"],
      [web, "web.test"],
    ] as const) {
      expect(s.issuer).toContain("Pebble Intermediate CA");
      expect(opensslVerify(s, root, h)).toMatchObject({ ok: true });
    }
    expect(api.fingerprint).not.toBe(web.fingerprint);
  });

  it("reuses the persisted account and certificates after a restart, with no new order", async () => {
    const issuedBefore = pebble.issued();
    const again = await createCertManager({
      store: createCertStore(dir),
      log,
      mode: "auto",
      email: "ops@example.com",
      directoryUrl: pebble.directoryUrl,
      caTrust: pebble.httpsCa,
      challenges: ["tls-alpn-01"],
      hostname: "acmebox",
    });
    managers.push(again);
    await again.setHosts([
      { host: "web.test", tls: "auto" },
      { host: "api.test", tls: "auto" },
    ]);
    await again.idle();
    expect(again.certInfo("api.test")).toMatchObject({ status: "issued", source: "acme" });
    expect(again.certInfo("web.test")).toMatchObject({ status: "issued", source: "acme" });
    expect(again.sni().map((e) => e.cert)).toEqual(m.sni().map((e) => e.cert));
    expect(pebble.issued()).toBe(issuedBefore);
    again.stop();
  });

  it("renews through TLS-ALPN-01 under load with no failed request", async () => {
    const before = (await sClient(tlsPort, "api.test")).fingerprint;
    const answered = () => lines.filter((l) => l.includes("tls-alpn-01 challenge answered")).length;
    const opened = answered();
    const stats = await underLoad("api.test", async () => {
      await m.renew("api.test");
      await listeners!.settled();
    });
    console.log(`tls-alpn-01 renewal under load: ${stats.ok} ok, ${stats.failed} failed`, stats.errors.slice(0, 3));
    expect(answered()).toBeGreaterThan(opened);
    expect(stats.failed).toBe(0);
    expect(listeners!.state()).toBe("tls");
    const after = await sClient(tlsPort, "api.test");
    expect(after.fingerprint).not.toBe(before);
    expect(after.sans).toEqual(["api.test"]);
  });
});

describe("HTTP-01 failing with the plain listener disabled", () => {
  let m: CertManager;
  beforeAll(async () => {
    m = await open(["http-01", "tls-alpn-01"], false);
  });
  afterAll(async () => close(m));

  it("falls back to TLS-ALPN-01", async () => {
    await m.setHosts([{ host: "fallback.test", tls: "auto" }]);
    await until(() => m.certInfo("fallback.test")?.status === "issued", { timeout: 30_000, what: "fallback.test issued" });
    expect(lines.some((l) => l.includes("acme order failed") && l.includes("host=fallback.test challenge=http-01"))).toBe(true);
    expect(lines.some((l) => l.includes("certificate issued host=fallback.test challenge=tls-alpn-01"))).toBe(true);
    await listeners!.settled();
    const served = await sClient(tlsPort, "fallback.test");
    expect(served.sans).toEqual(["fallback.test"]);
    expect(opensslVerify(served, root, "fallback.test")).toMatchObject({ ok: true });
  });
});
