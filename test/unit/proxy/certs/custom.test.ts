/** An uploaded certificate needs a matching key, an issuing chain, a name covering the domain and a future expiry. */
import { describe, expect, it } from "bun:test";
import { execFileSync } from "node:child_process";
import type { HttpError } from "../../../../src/lib/errors";
import { nameCovers, validateCustomCert } from "../../../../src/proxy/certs/custom";
import { opensslCa, opensslCert } from "../../../helpers/tls";
import { tempDir } from "../../../helpers/tmp";

const dir = tempDir();
const ca = opensslCa(dir, "Custom CA");
const other = opensslCa(dir, "Other CA");

function reason(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    expect((e as HttpError).status).toBe(400);
    return (e as HttpError).reason;
  }
  throw new Error("expected a 400");
}

describe("nameCovers", () => {
  it.each([
    ["example.com", "example.com", true],
    ["EXAMPLE.com", "example.COM", true],
    ["*.example.com", "a.example.com", true],
    ["*.example.com", "example.com", false],
    ["*.example.com", "a.b.example.com", false],
    ["*.example.com", "*.example.com", true],
    ["a.example.com", "*.example.com", false],
    ["10.0.0.1", "10.0.0.1", true],
  ])("%s covers %s: %p", (pattern, host, want) => {
    expect(nameCovers(pattern, host)).toBe(want);
  });
});

describe("validateCustomCert", () => {
  it("accepts a matching chain and key and describes the certificate", () => {
    const c = opensslCert(dir, { sans: ["shop.example.com"], ca, days: 20 });
    const info = validateCustomCert("shop.example.com", `${c.cert}${ca.cert}`, c.key);
    expect(info.subject).toBe("CN=shop.example.com");
    expect(info.issuer).toBe("CN=Custom CA");
    expect(info.sans).toEqual(["shop.example.com"]);
    expect(Date.parse(info.notAfter) - Date.parse(info.notBefore)).toBe(20 * 86_400_000);
    expect(info.fingerprint).toMatch(/^[0-9A-F:]{95}$/);
  });

  it("accepts RSA keys and wildcard certificates", () => {
    const c = opensslCert(dir, { sans: ["*.example.org"], ca, rsa: true });
    expect(validateCustomCert("api.example.org", c.cert, c.key).sans).toEqual(["*.example.org"]);
  });

  it("rejects a key that does not match", () => {
    const a = opensslCert(dir, { sans: ["x.example.com"], ca });
    const b = opensslCert(dir, { sans: ["x.example.com"], ca });
    expect(reason(() => validateCustomCert("x.example.com", a.cert, b.key))).toBe("the key does not match the certificate");
  });

  it("rejects a certificate that does not cover the domain", () => {
    const c = opensslCert(dir, { sans: ["*.example.com"], ca });
    expect(reason(() => validateCustomCert("a.b.example.com", c.cert, c.key))).toBe(
      "the certificate does not cover a.b.example.com",
    );
  });

  it("rejects an expired certificate with its expiry date", () => {
    const c = opensslCert(dir, { sans: ["old.example.com"], ca, days: -1 });
    expect(reason(() => validateCustomCert("old.example.com", c.cert, c.key))).toMatch(
      /^the certificate expired on \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/,
    );
  });

  it("rejects a chain whose intermediate did not issue the leaf", () => {
    const c = opensslCert(dir, { sans: ["y.example.com"], ca });
    expect(reason(() => validateCustomCert("y.example.com", `${c.cert}${other.cert}`, c.key))).toBe(
      "the chain is out of order: certificate 2 did not issue certificate 1",
    );
  });

  it("rejects text that is not PEM and encrypted keys", () => {
    const c = opensslCert(dir, { sans: ["z.example.com"], ca });
    expect(reason(() => validateCustomCert("z.example.com", "hello", c.key))).toBe("the certificate is not a PEM certificate");
    expect(reason(() => validateCustomCert("z.example.com", c.cert, "nope"))).toBe("the private key is not a PEM private key");
    const garbled = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    expect(reason(() => validateCustomCert("z.example.com", garbled, c.key))).toBe("the certificate could not be parsed");
    const encrypted = execFileSync("openssl", ["pkey", "-in", c.keyPath, "-aes256", "-passout", "pass:secret"]).toString();
    expect(reason(() => validateCustomCert("z.example.com", c.cert, encrypted))).toBe(
      "the private key is encrypted; upload it without a passphrase",
    );
  });
});
