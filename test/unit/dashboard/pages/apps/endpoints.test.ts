/** The Endpoints tab's rules (pages/apps/endpoints.ts): effective TLS, links, certificate expiry and problems. */
import { describe, expect, test } from "bun:test";
import {
  certProblem,
  effectiveTls,
  endpointUrl,
  expiryLevel,
  expiryText,
  usesLocalCa,
} from "../../../../../src/dashboard/pages/apps/endpoints";
import type { CertInfo } from "../../../../../src/shared/certs";

const DAY = 86_400_000;
const NOW = Date.parse("2026-05-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

const cert = (over: Partial<CertInfo>): CertInfo => ({
  domain: "a.test",
  mode: "local",
  status: "issued",
  source: "local",
  not_before: iso(NOW - DAY),
  not_after: iso(NOW + 90 * DAY),
  issuer: "CN=Sundeck Local CA",
  subject: "CN=a.test",
  sans: ["a.test"],
  fingerprint: null,
  error: null,
  next_attempt_at: null,
  ...over,
});

describe("endpoints", () => {
  test("the effective TLS mode is the endpoint's, else the server's; off on the server wins", () => {
    expect(effectiveTls({ tls: null }, "local")).toEqual({ mode: "local", inherited: true });
    expect(effectiveTls({ tls: "custom" }, "local")).toEqual({ mode: "custom", inherited: false });
    expect(effectiveTls({ tls: "off" }, "auto")).toEqual({ mode: "off", inherited: false });
    expect(effectiveTls({ tls: "custom" }, "off").mode).toBe("off");
  });

  test("links use https unless TLS is off, keep the path, and skip wildcards", () => {
    expect(endpointUrl("app.test", "/", "local")).toBe("https://app.test/");
    expect(endpointUrl("app.test", "/api", "auto")).toBe("https://app.test/api");
    expect(endpointUrl("app.test", "/", "off")).toBe("http://app.test/");
    expect(endpointUrl("*.app.test", "/", "auto")).toBeNull();
  });

  test("expiry levels and words", () => {
    expect(expiryLevel(iso(NOW + 90 * DAY), NOW)).toBe("ok");
    expect(expiryLevel(iso(NOW + 13 * DAY), NOW)).toBe("warn");
    expect(expiryLevel(iso(NOW - 1000), NOW)).toBe("expired");
    expect(expiryText(iso(NOW + 90 * DAY - 5000), NOW)).toBe("90 days left");
    expect(expiryText(iso(NOW + 1 * DAY + 5000), NOW)).toBe("1 day left");
    expect(expiryText(iso(NOW + 3_600_000), NOW)).toBe("less than a day left");
    expect(expiryText(iso(NOW - 3 * DAY), NOW)).toBe("expired 3 days ago");
  });

  test("failed and expired certificates are problems; a fallback's note is not", () => {
    expect(certProblem(cert({ status: "failed", error: "rate limited" }), NOW)).toBe("rate limited");
    expect(certProblem(cert({ not_after: iso(NOW - DAY), error: "the certificate expired on x" }), NOW)).toBe(
      "the certificate expired on x",
    );
    expect(certProblem(cert({ status: "pending", source: "fallback", error: "no certificate uploaded" }), NOW)).toBeNull();
  });

  test("the trust link shows for local mode and for local-CA fallbacks", () => {
    expect(usesLocalCa(["local"], [])).toBe(true);
    expect(usesLocalCa(["custom"], [cert({ source: "fallback" })])).toBe(true);
    expect(usesLocalCa(["auto"], [cert({ source: "acme" })])).toBe(false);
  });
});
