/** The cert store writes private files under certs/, reads them back, and refuses names that escape its layout. */
import { describe, expect, it } from "bun:test";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { certMeta, createCertStore, isCertHost, pemCertificates } from "../../../../src/proxy/certs/store";
import { opensslCa, opensslCert } from "../../../helpers/tls";
import { tempDir } from "../../../helpers/tmp";

const mode = (p: string) => statSync(p).mode & 0o777;

describe("cert store", () => {
  it("writes every kind of certificate under certs/ with 0700 directories and 0600 files", () => {
    const dir = tempDir();
    const store = createCertStore(dir);
    const pair = { cert: "CERT\n", key: "KEY\n" };
    store.writeAccountKey("ACCOUNT\n");
    store.writeAcme("a.example.com", pair);
    store.writeCustom("shop", "*.example.com", pair);
    store.writeLocalCa(pair);
    store.writeLocal("b.example.com", pair);
    const root = join(dir, "certs");
    for (const f of [
      "acme/account.key",
      "acme/a.example.com/cert.pem",
      "acme/a.example.com/key.pem",
      "custom/shop/_wildcard.example.com/cert.pem",
      "custom/shop/_wildcard.example.com/key.pem",
      "local/ca.crt",
      "local/ca.key",
      "local/b.example.com/key.pem",
    ]) {
      expect(mode(join(root, f))).toBe(0o600);
    }
    for (const d of ["", "acme", "acme/a.example.com", "custom", "custom/shop", "local", "local/b.example.com"]) {
      expect(mode(join(root, d))).toBe(0o700);
    }
    // atomic writes leave no temporary files behind
    expect(readdirSync(join(root, "acme", "a.example.com")).sort()).toEqual(["cert.pem", "key.pem"]);
  });

  it("reads back what it wrote and lists custom certificates", () => {
    const store = createCertStore(tempDir());
    const pair = { cert: "C", key: "K" };
    expect(store.readAcme("a.example.com")).toBeNull();
    expect(store.readAccountKey()).toBeNull();
    store.writeAcme("a.example.com", pair);
    store.writeAccountKey("A");
    expect(store.readAcme("a.example.com")).toEqual(pair);
    expect(store.readAccountKey()).toBe("A");
    store.writeCustom("shop", "example.com", pair);
    store.writeCustom("blog", "*.blog.example", pair);
    expect(store.listCustom().sort((a, b) => a.app.localeCompare(b.app))).toEqual([
      { app: "blog", domain: "*.blog.example" },
      { app: "shop", domain: "example.com" },
    ]);
    expect(store.readCustom("blog", "*.blog.example")).toEqual(pair);
    expect(store.removeCustom("shop", "example.com")).toBe(true);
    expect(store.removeCustom("shop", "example.com")).toBe(false);
    expect(store.listCustom()).toEqual([{ app: "blog", domain: "*.blog.example" }]);
  });

  it("refuses names that would escape or collide in the directory layout", () => {
    const dir = tempDir();
    const store = createCertStore(dir);
    const pair = { cert: "C", key: "K" };
    for (const bad of ["../x", "a/b", "", "A.EXAMPLE.COM", "a..b", "-a.com", "ca.crt"]) {
      expect(() => store.writeLocal(bad, pair)).toThrow();
    }
    expect(() => store.writeAcme("account.key", pair)).toThrow();
    expect(() => store.writeCustom("../etc", "a.com", pair)).toThrow();
    expect(existsSync(join(dir, "x"))).toBe(false);
  });

  it("accepts DNS names, wildcards and IP addresses as hosts", () => {
    for (const ok of ["example.com", "a-b.c.example", "*.example.com", "localhost", "10.0.0.1", "::1"]) {
      expect(isCertHost(ok)).toBe(true);
    }
    for (const bad of ["*", "a.*.com", "exa mple.com", "x_y.com", "a".repeat(64)]) expect(isCertHost(bad)).toBe(false);
  });

  it("reads validity, names, issuer and fingerprint of a certificate", () => {
    const dir = tempDir();
    const ca = opensslCa(dir, "Meta CA");
    const leaf = opensslCert(dir, { sans: ["a.example.com", "*.b.example.com", "IP:10.1.2.3"], ca, days: 10 });
    const meta = certMeta(`${leaf.cert}${ca.cert}`);
    expect(meta.sans).toEqual(["a.example.com", "*.b.example.com", "10.1.2.3"]);
    expect(meta.issuer).toBe("CN=Meta CA");
    expect(meta.subject).toBe("CN=a.example.com");
    expect(meta.notAfter - meta.notBefore).toBe(10 * 86_400_000);
    expect(meta.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(pemCertificates(`${leaf.cert}${ca.cert}`)).toHaveLength(2);
  });
});
