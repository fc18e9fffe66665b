/** ACME renews 30 days before expiry or at 2/3 of the life, whichever is first; failures back off 1 min to 6 h. */
import { describe, expect, it } from "bun:test";
import { backoffDelay, renewAt } from "../../../../src/proxy/certs/acme";

const DAY = 86_400_000;
const MIN = 60_000;

describe("renewAt", () => {
  it("renews a 90-day certificate 30 days before expiry (which is also 2/3 of its life)", () => {
    expect(renewAt({ notBefore: 0, notAfter: 90 * DAY })).toBe(60 * DAY);
  });
  it("renews a year-long certificate at 2/3 of its life, before the last 30 days", () => {
    expect(renewAt({ notBefore: 0, notAfter: 360 * DAY })).toBe(240 * DAY);
  });
  it("renews a 75-day certificate 30 days before expiry, before 2/3 of its life", () => {
    expect(renewAt({ notBefore: 0, notAfter: 75 * DAY })).toBe(45 * DAY);
  });
  it("renews short-lived certificates (6 and 45 days) at 2/3 of their life, never right after issuance", () => {
    expect(renewAt({ notBefore: 0, notAfter: 6 * DAY })).toBe(4 * DAY);
    expect(renewAt({ notBefore: 0, notAfter: 45 * DAY })).toBe(30 * DAY);
  });
});

describe("backoffDelay", () => {
  it("starts at one minute, doubles and stops at six hours", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20].map((n) => backoffDelay(n) / MIN)).toEqual([
      1, 2, 4, 8, 16, 32, 64, 128, 256, 360, 360,
    ]);
  });
});
