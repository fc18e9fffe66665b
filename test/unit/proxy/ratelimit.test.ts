/** Rate limits key by address, path or header without mixing buckets, per app, and forget apps that left the table. */
import { describe, expect, it } from "bun:test";
import { AppLimiters, rateKey } from "../../../src/proxy/ratelimit";
import type { RouteRateLimit } from "../../../src/proxy/route-table";
import { FakeClock } from "../../helpers/clock";

function rl(by: string, requests = 2, burst = 2, windowMs = 60_000): RouteRateLimit {
  const header = by.startsWith("header:") ? by.slice(7).toLowerCase() : null;
  return { requests, windowMs, burst, by, header, id: `${requests}/${windowMs}/${burst}/${by}` };
}

describe("rate limit keys", () => {
  const headers = new Headers({ "x-api-key": "k1" });
  it("keys by client address", () => expect(rateKey(rl("ip"), headers, "1.2.3.4", "/a")).toBe("1.2.3.4"));
  it("keys by path", () => expect(rateKey(rl("path"), headers, "1.2.3.4", "/a")).toBe("/a"));
  it("keys by a header, case-insensitively", () =>
    expect(rateKey(rl("header:X-Api-Key"), headers, "1.2.3.4", "/a")).toBe("h:k1"));
  it("falls back to the address when the header is missing", () =>
    expect(rateKey(rl("header:X-Api-Key"), new Headers(), "1.2.3.4", "/a")).toBe("ip:1.2.3.4"));
  it("never lets a header value share an address bucket", () =>
    expect(rateKey(rl("header:x-api-key"), new Headers({ "x-api-key": "ip:1.2.3.4" }), "9.9.9.9", "/")).not.toBe(
      rateKey(rl("header:x-api-key"), new Headers(), "1.2.3.4", "/"),
    ));
});

describe("per-app limiters", () => {
  it("limits each app and key separately and answers Retry-After in seconds", () => {
    const clock = new FakeClock();
    const l = new AppLimiters(clock);
    const cfg = rl("ip", 6, 2, 60_000);
    expect(l.take("a", cfg, "k").ok).toBe(true);
    expect(l.take("a", cfg, "k").ok).toBe(true);
    const refused = l.take("a", cfg, "k");
    expect(refused.ok).toBe(false);
    expect(refused.retryAfter).toBe(10); // 6 per minute: one token every 10 s
    expect(l.take("a", cfg, "other").ok).toBe(true);
    expect(l.take("b", cfg, "k").ok).toBe(true);
    clock.advance(10_000);
    expect(l.take("a", cfg, "k").ok).toBe(true);
  });

  it("keeps a limiter while its settings stay, rebuilds it when they change", () => {
    const l = new AppLimiters(new FakeClock());
    const cfg = rl("ip", 1, 1);
    l.take("a", cfg, "k");
    expect(l.take("a", { ...cfg }, "k").ok).toBe(false); // same id: same buckets
    expect(l.take("a", rl("ip", 1, 2), "k").ok).toBe(true); // new settings: fresh buckets
  });

  it("forgets apps that left the table and bounds keys per app", () => {
    const l = new AppLimiters(new FakeClock(), 100);
    const cfg = rl("ip", 1, 1);
    for (let i = 0; i < 1000; i++) l.take("a", cfg, `k${i}`);
    l.take("b", cfg, "k");
    expect(l.size).toBe(2);
    l.retain(new Set(["b"]));
    expect(l.size).toBe(1);
  });
});
