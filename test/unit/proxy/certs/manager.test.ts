/** Cert management serves a fallback while orders back off, keeps uploads to their app, follows the table's hosts. */
import { afterAll, describe, expect, it } from "bun:test";
import { X509Certificate } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { LogSink } from "../../../../src/log/logger";
import { createCertManager } from "../../../../src/proxy/certs/manager";
import { createCertStore } from "../../../../src/proxy/certs/store";
import { FakeClock } from "../../../helpers/clock";
import { opensslCa, opensslCert } from "../../../helpers/tls";
import { tempDir } from "../../../helpers/tmp";

const MIN = 60_000;
const log = new LogSink({ stdout: false }).logger("certs");

// an "ACME directory" that answers 404: acme-client gives up at once (no retry), so every order fails fast
let hits = 0;
const broken = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => {
    hits++;
    return new Response("no", { status: 404 });
  },
});
afterAll(() => broken.stop(true));

const issuerOf = (pem: string) => new X509Certificate(pem).issuer;

describe("cert manager", () => {
  it("serves a local fallback for an auto host and retries failed orders with doubling backoff", async () => {
    const clock = new FakeClock(Date.now());
    const m = await createCertManager({
      store: createCertStore(tempDir()),
      log,
      clock,
      mode: "auto",
      email: "ops@example.com",
      directoryUrl: `http://127.0.0.1:${broken.port}/directory`,
      hostname: "mbox",
    });
    try {
      await m.setHosts([{ host: "a.test", tls: "auto" }]);
      const entry = m.sni().find((e) => e.serverName === "a.test")!;
      expect(issuerOf(entry.cert)).toContain("Sundeck Local CA mbox");
      await m.idle();
      const first = m.certInfo("a.test")!;
      expect(first).toMatchObject({ status: "failed", source: "fallback" });
      expect(first.error).toContain("404");
      expect(Date.parse(first.nextAttemptAt!)).toBe(clock.now() + MIN);

      const seen = hits;
      await m.refresh(); // not due yet: nothing happens
      await m.idle();
      expect(hits).toBe(seen);

      const waits: number[] = [];
      for (let i = 0; i < 10; i++) {
        clock.set(Date.parse(m.certInfo("a.test")!.nextAttemptAt!));
        await m.refresh();
        await m.idle();
        waits.push((Date.parse(m.certInfo("a.test")!.nextAttemptAt!) - clock.now()) / MIN);
      }
      expect(waits).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 360, 360]);
      expect(hits).toBeGreaterThan(seen);
    } finally {
      m.stop();
    }
  });

  it("reports auto without an email as failed with the reason", async () => {
    const m = await createCertManager({ store: createCertStore(tempDir()), log, mode: "local", hostname: "mbox" });
    try {
      await m.setHosts([{ host: "b.test", tls: "auto" }]);
      await m.idle();
      expect(m.certInfo("b.test")).toMatchObject({
        status: "failed",
        error: "tls.email is required for automatic certificates",
      });
      await expect(m.renew("b.test")).rejects.toThrow("tls.email is required");
    } finally {
      m.stop();
    }
  });

  it("never serves one app's uploaded certificate for another app's host", async () => {
    const dir = tempDir();
    const ca = opensslCa(dir, "Upload CA");
    const c = opensslCert(dir, { sans: ["*.shared.test"], ca });
    const m = await createCertManager({ store: createCertStore(dir), log, mode: "custom", hostname: "mbox" });
    try {
      await m.putCustom("alpha", "*.shared.test", c.cert, c.key);
      await m.setHosts([
        { host: "a.shared.test", tls: "custom", app: "alpha" },
        { host: "b.shared.test", tls: "custom", app: "beta" },
        { host: "ui.shared.test", tls: "custom" },
      ]);
      expect(m.certInfo("a.shared.test")).toMatchObject({ status: "issued", source: "custom", issuer: "CN=Upload CA" });
      expect(m.certInfo("b.shared.test")).toMatchObject({
        status: "pending",
        source: "fallback",
        error: "no certificate uploaded",
      });
      // a host without an app (the management domain) may use any upload
      expect(m.certInfo("ui.shared.test")).toMatchObject({ status: "issued", source: "custom" });
    } finally {
      m.stop();
    }
  });

  it("announces a batch of changes once and drops hosts that leave the route table", async () => {
    const m = await createCertManager({ store: createCertStore(tempDir()), log, mode: "local", hostname: "mbox" });
    try {
      let calls = 0;
      m.onChange(() => calls++);
      await m.setHosts([
        { host: "one.test", tls: "local" },
        { host: "two.test", tls: "local" },
        { host: "off.test", tls: "off" },
      ]);
      await new Promise((r) => setImmediate(r));
      expect(calls).toBe(1);
      expect(
        m
          .sni()
          .map((e) => e.serverName)
          .sort(),
      ).toEqual(["one.test", "two.test"]);
      expect(m.isPlain("off.test")).toBe(true);
      expect(m.isPlain("one.test")).toBe(false);
      await m.setHosts([{ host: "one.test", tls: "local" }]);
      await new Promise((r) => setImmediate(r));
      expect(calls).toBe(2);
      expect(m.sni().map((e) => e.serverName)).toEqual(["one.test"]);
      expect(m.certInfo("two.test")).toBeNull();
      await m.setHosts([{ host: "one.test", tls: "local" }]);
      await new Promise((r) => setImmediate(r));
      expect(calls).toBe(2);
    } finally {
      m.stop();
    }
  });

  it("makes no certificates at all when TLS is off", async () => {
    const dir = tempDir();
    const m = await createCertManager({ store: createCertStore(dir), log, mode: "off" });
    await m.setHosts([{ host: "x.test", tls: "local" }]);
    expect(m.localCa()).toBeNull();
    expect(m.sni()).toEqual([]);
    expect(() => m.fallback()).toThrow();
    expect(m.isPlain("x.test")).toBe(true);
    expect(existsSync(join(dir, "certs", "local"))).toBe(false);
    expect(readdirSync(join(dir, "certs"))).toEqual([]);
    m.stop();
  });
});
