/**
 * TLS modes through real listeners: uploaded certificates (validated), local-CA leaves, the fallback, tls off, the
 * plain listener's redirect and ACME path, and a certificate change that keeps in-flight requests alive.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { HttpError } from "../../../src/lib/errors";
import { LogSink } from "../../../src/log/logger";
import { createCertManager } from "../../../src/proxy/certs/manager";
import { createCertStore } from "../../../src/proxy/certs/store";
import { type Listeners, startListeners } from "../../../src/proxy/listeners";
import type { CertSource } from "../../../src/proxy/types";
import { until } from "../../helpers/http";
import { echoHandler, fetchTls, opensslCa, opensslCert, opensslVerify, sClient } from "../../helpers/tls";
import { tempDir } from "../../helpers/tmp";

const sink = new LogSink({ stdout: false });
const log = sink.logger("proxy");
const dir = tempDir();
const certDir = tempDir();
const ca = opensslCa(certDir, "Upload Test CA");
const echo = echoHandler();
const tokens = new Map<string, string>();

let manager: Awaited<ReturnType<typeof createCertManager>>;
let listeners: Listeners;
let tlsPort: number;
let plainPort: number;

beforeAll(async () => {
  manager = await createCertManager({ store: createCertStore(dir), log, mode: "local", hostname: "testbox" });
  await manager.setHosts([
    { host: "local.test", tls: "local" },
    { host: "shop.test", tls: "custom", app: "shop" },
    { host: "plain.test", tls: "off" },
  ]);
  // the manager's own HTTP-01 tokens exist only during an order; the test adds its own through the same seam
  const certs: CertSource = {
    sni: () => manager.sni(),
    fallback: () => manager.fallback(),
    onChange: (fn) => manager.onChange(fn),
    http01: (t) => tokens.get(t) ?? manager.http01(t),
    alpnChallenges: () => manager.alpnChallenges(),
  };
  listeners = await startListeners({
    config: { listenAddr: "127.0.0.1:0", httpListenAddr: "127.0.0.1:0", mode: "local" },
    handler: echo.handler,
    certs,
    log,
    plainHost: (h) => manager.isPlain(h),
  });
  ({ main: tlsPort, plain: plainPort } = listeners.ports() as { main: number; plain: number });
});

afterAll(async () => {
  echo.release();
  await listeners?.stop(true);
  manager?.stop();
});

async function rejects(fn: () => Promise<unknown>): Promise<HttpError> {
  try {
    await fn();
  } catch (e) {
    return e as HttpError;
  }
  throw new Error("expected a rejection");
}

describe("custom certificates", () => {
  it("rejects a key that does not match the certificate", async () => {
    const a = opensslCert(certDir, { sans: ["shop.test"], ca });
    const b = opensslCert(certDir, { sans: ["shop.test"], ca });
    const e = await rejects(() => manager.putCustom("shop", "shop.test", a.cert, b.key));
    expect(e.status).toBe(400);
    expect(e.reason).toBe("the key does not match the certificate");
  });

  it("rejects a certificate for another domain", async () => {
    const c = opensslCert(certDir, { sans: ["other.test", "*.shop.test"], ca });
    const e = await rejects(() => manager.putCustom("shop", "shop.test", c.cert, c.key));
    expect(e.reason).toBe("the certificate does not cover shop.test");
  });

  it("rejects an expired certificate", async () => {
    const c = opensslCert(certDir, { sans: ["shop.test"], ca, days: -1 });
    const e = await rejects(() => manager.putCustom("shop", "shop.test", c.cert, c.key));
    expect(e.reason).toMatch(/^the certificate expired on \d{4}-\d\d-\d\dT/);
  });

  it("serves a local fallback until a certificate is uploaded", async () => {
    expect(manager.certInfo("shop.test")).toMatchObject({ mode: "custom", status: "pending", source: "fallback" });
    const served = await sClient(tlsPort, "shop.test");
    expect(served.issuer).toContain("Sundeck Local CA testbox");
  });

  it("serves an uploaded certificate (chain included) for its host", async () => {
    const c = opensslCert(certDir, { sans: ["shop.test"], ca });
    const info = await manager.putCustom("shop", "shop.test", `${c.cert}${ca.cert}`, c.key);
    expect(info).toMatchObject({ sans: ["shop.test"], subject: "CN=shop.test", issuer: "CN=Upload Test CA" });
    expect(Date.parse(info.notAfter)).toBeGreaterThan(Date.now());
    await listeners.settled();
    const served = await sClient(tlsPort, "shop.test");
    expect(served.subject).toBe("CN=shop.test");
    expect(served.issuer).toBe("CN=Upload Test CA");
    expect(opensslVerify(served, ca.cert, "shop.test").ok).toBe(true);
    expect(manager.certInfo("shop.test")).toMatchObject({ status: "issued", source: "custom", issuer: "CN=Upload Test CA" });
    const res = await fetchTls(tlsPort, "shop.test", "/x", ca.cert);
    expect(await res.json()).toMatchObject({ host: "shop.test", path: "/x", secure: true, clientIp: "127.0.0.1" });
  });

  it("falls back to a local leaf when the upload is removed", async () => {
    expect(await manager.removeCustom("shop", "shop.test")).toBe(true);
    expect(await manager.removeCustom("shop", "shop.test")).toBe(false);
    await listeners.settled();
    expect((await sClient(tlsPort, "shop.test")).issuer).toContain("Sundeck Local CA testbox");
  });
});

describe("local CA", () => {
  it("serves a leaf per host that verifies with the CA from caPem()", async () => {
    const caPem = manager.localCa()!.caPem();
    const served = await sClient(tlsPort, "local.test");
    expect(served.subject).toBe("CN=local.test");
    expect(served.sans).toEqual(["local.test"]);
    expect(opensslVerify(served, caPem, "local.test")).toMatchObject({ ok: true });
    const days = (served.notAfter.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89);
    expect(days).toBeLessThanOrEqual(90);
    const res = await fetchTls(tlsPort, "local.test", "/hello?a=1", caPem);
    expect(res.status).toBe(200);
  });

  it("serves the fallback for an unknown server name and for none", async () => {
    for (const name of ["unknown.test", ""]) {
      const served = await sClient(tlsPort, name);
      expect(served.subject).toBe("CN=localhost");
      expect(served.issuer).toContain("Sundeck Local CA testbox");
    }
  });
});

describe("plain listener", () => {
  it("redirects with 308 to https, keeping path and query and naming the TLS port", async () => {
    const res = await fetch(`http://127.0.0.1:${plainPort}/a/b%20c?x=1&y=two`, {
      headers: { host: "local.test:8080" },
      redirect: "manual",
    });
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe(`https://local.test:${tlsPort}/a/b%20c?x=1&y=two`);
  });

  it("answers ACME HTTP-01 challenges and 404 for unknown tokens", async () => {
    tokens.set("tok123", "tok123.thumbprint");
    const ok = await fetch(`http://127.0.0.1:${plainPort}/.well-known/acme-challenge/tok123`, { headers: { host: "x.test" } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("tok123.thumbprint");
    const missing = await fetch(`http://127.0.0.1:${plainPort}/.well-known/acme-challenge/nope`, { headers: { host: "x.test" } });
    expect(missing.status).toBe(404);
  });

  it("serves hosts whose TLS is off instead of redirecting them", async () => {
    const res = await fetch(`http://127.0.0.1:${plainPort}/p`, { headers: { host: "plain.test" }, redirect: "manual" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ host: "plain.test", secure: false, clientIp: "127.0.0.1" });
    expect(manager.certInfo("plain.test")).toMatchObject({ mode: "off", status: "none" });
  });
});

describe("certificate changes", () => {
  it("take effect on the next handshake without dropping in-flight requests", async () => {
    const caPem = manager.localCa()!.caPem();
    const slow = fetchTls(tlsPort, "local.test", "/hold", caPem);
    await until(() => echo.holding() === 1, { what: "the held request" });
    await manager.setHosts([
      { host: "local.test", tls: "local" },
      { host: "shop.test", tls: "custom", app: "shop" },
      { host: "plain.test", tls: "off" },
      { host: "new.test", tls: "local" },
    ]);
    await listeners.settled();
    // new connections see the new certificate set while the request is still held
    expect((await sClient(tlsPort, "new.test")).subject).toBe("CN=new.test");
    const fresh = await fetchTls(tlsPort, "new.test", "/", caPem);
    expect(fresh.status).toBe(200);
    echo.release();
    const res = await slow;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ path: "/hold", secure: true });
  });
});

describe("tls off", () => {
  it("serves plain HTTP on listen_addr with no plain listener", async () => {
    const off = await startListeners({
      config: { listenAddr: "127.0.0.1:0", httpListenAddr: ":0", mode: "off" },
      handler: echo.handler,
      certs: manager,
      log,
    });
    try {
      expect(off.ports().plain).toBeNull();
      expect(off.state()).toBe("plain");
      const res = await fetch(`http://127.0.0.1:${off.ports().main}/q?z=1`, { headers: { host: "app.test" } });
      expect(await res.json()).toMatchObject({ host: "app.test", path: "/q", secure: false, clientIp: "127.0.0.1" });
    } finally {
      await off.stop(true);
    }
  });
});
