/** The /trust page names the local CA with its fingerprint, escapes what it prints, and the CA downloads as PEM. */
import { describe, expect, it } from "bun:test";
import { X509Certificate } from "node:crypto";
import { openLocalCa } from "../../../../src/proxy/certs/local-ca";
import { createCertStore } from "../../../../src/proxy/certs/store";
import { caDownload, trustPage, trustResponse } from "../../../../src/proxy/certs/trust";
import { FakeClock } from "../../../helpers/clock";
import { tempDir } from "../../../helpers/tmp";

const ca = await openLocalCa({ store: createCertStore(tempDir()), clock: new FakeClock(Date.now()), hostname: "trustbox" });

describe("trust page", () => {
  it("names the CA, shows its fingerprint and explains every platform", async () => {
    const res = trustResponse(ca, "/trust/ca.crt");
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    expect(html).toContain("Sundeck Local CA trustbox");
    expect(html).toContain(ca.caFingerprint());
    expect(html).toContain('href="/trust/ca.crt"');
    for (const text of [
      "update-ca-certificates",
      "update-ca-trust",
      "security add-trusted-cert",
      "certutil -addstore",
      "Firefox",
    ]) {
      expect(html).toContain(text);
    }
  });

  it("escapes what it prints", () => {
    const html = trustPage({ caPem: () => "", caFingerprint: () => "<b>", caName: () => 'x"<script>' }, "/a?b=1&c=2");
    expect(html).not.toContain("<script>");
    expect(html).toContain("&lt;b&gt;");
    expect(html).toContain("/a?b=1&amp;c=2");
  });

  it("downloads the CA certificate as PEM", async () => {
    const res = caDownload(ca);
    expect(res.headers.get("content-type")).toBe("application/x-x509-ca-cert");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="sundeck-local-ca.crt"');
    const pem = await res.text();
    expect(new X509Certificate(pem).fingerprint256).toBe(ca.caFingerprint());
  });
});
