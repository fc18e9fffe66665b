/** The local CA creates its root once and issues 90-day leaves that openssl verifies, renewed with 30 days left. */
import { describe, expect, it } from "bun:test";
import { X509Certificate } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeAlpnCertificate, openLocalCa } from "../../../../src/proxy/certs/local-ca";
import { createCertStore } from "../../../../src/proxy/certs/store";
import { FakeClock } from "../../../helpers/clock";
import { tempDir } from "../../../helpers/tmp";

const DAY = 86_400_000;

function verify(dir: string, caPem: string, leafPem: string, host: string) {
  writeFileSync(join(dir, "ca.pem"), caPem);
  writeFileSync(join(dir, "leaf.pem"), leafPem);
  const hostArg = host.includes(".") && !/^\d/.test(host) ? ["-verify_hostname", host] : ["-verify_ip", host];
  const p = Bun.spawnSync(["openssl", "verify", "-CAfile", "ca.pem", ...hostArg, "leaf.pem"], { cwd: dir, stderr: "pipe" });
  return p.exitCode === 0;
}

describe("local CA", () => {
  it("creates the root once, persists it and names it after the host", async () => {
    const dir = tempDir();
    const clock = new FakeClock(Date.now());
    const first = await openLocalCa({ store: createCertStore(dir), clock, hostname: "box1" });
    const again = await openLocalCa({ store: createCertStore(dir), clock, hostname: "other" });
    expect(again.caFingerprint()).toBe(first.caFingerprint());
    expect(first.caName()).toBe("Sundeck Local CA box1");
    const x = new X509Certificate(first.caPem());
    expect(x.ca).toBe(true);
    const years = (Date.parse(x.validTo) - Date.parse(x.validFrom)) / (365.25 * DAY);
    expect(Math.round(years)).toBe(10);
  });

  it("issues 90-day leaves for names and addresses that openssl verifies against the root", async () => {
    const dir = tempDir();
    const ca = await openLocalCa({ store: createCertStore(dir), clock: new FakeClock(Date.now()), hostname: "box" });
    for (const host of ["app.internal.test", "10.9.8.7"]) {
      const leaf = await ca.leaf(host);
      expect(verify(dir, ca.caPem(), leaf.cert, host)).toBe(true);
      const x = new X509Certificate(leaf.cert);
      expect(x.ca).toBe(false);
      expect(x.subjectAltName).toBe(host.startsWith("10.") ? `IP Address:${host}` : `DNS:${host}`);
      expect(Math.round((Date.parse(x.validTo) - Date.now()) / DAY)).toBe(90);
      expect(x.checkPrivateKey(await import("node:crypto").then((c) => c.createPrivateKey(leaf.key)))).toBe(true);
    }
  });

  it("reuses a leaf while it has more than 30 days left and renews it after", async () => {
    const clock = new FakeClock(Date.now());
    const ca = await openLocalCa({ store: createCertStore(tempDir()), clock, hostname: "box" });
    const [a, b] = await Promise.all([ca.leaf("r.test"), ca.leaf("r.test")]);
    expect(b.cert).toBe(a.cert);
    clock.advance(59 * DAY);
    expect((await ca.leaf("r.test")).cert).toBe(a.cert);
    clock.advance(2 * DAY);
    expect(ca.isFresh(a)).toBe(false);
    const renewed = await ca.leaf("r.test");
    expect(renewed.cert).not.toBe(a.cert);
    expect(ca.isFresh(renewed)).toBe(true);
  });

  it("does not accept a leaf signed by another CA as fresh", async () => {
    const clock = new FakeClock(Date.now());
    const one = await openLocalCa({ store: createCertStore(tempDir()), clock, hostname: "one" });
    const two = await openLocalCa({ store: createCertStore(tempDir()), clock, hostname: "two" });
    expect(two.isFresh(await one.leaf("x.test"))).toBe(false);
  });
});

describe("TLS-ALPN-01 certificate", () => {
  it("carries the critical acmeIdentifier extension that acme-client's own check accepts", async () => {
    const pair = await makeAlpnCertificate("chal.example.com", "token.thumbprint");
    const acme = await import("acme-client");
    expect(acme.crypto.isAlpnCertificateAuthorizationValid(pair.cert, "token.thumbprint")).toBe(true);
    expect(acme.crypto.isAlpnCertificateAuthorizationValid(pair.cert, "token.other")).toBe(false);
    const text = Bun.spawnSync(["openssl", "x509", "-noout", "-text"], {
      stdin: new TextEncoder().encode(pair.cert),
    }).stdout.toString();
    expect(text).toContain("1.3.6.1.5.5.7.1.31: critical");
    expect(text).toContain("DNS:chal.example.com");
    expect(text).toContain("Digital Signature");
  });
});
