/** The token-bucket rate limiter: burst, refill, retry-after, independent keys, and a bounded key count. */
import { describe, expect, it } from "bun:test";
import { RateLimiter, type RateLimitOptions } from "../../../src/lib/ratelimit";
import { FakeClock } from "../../helpers/clock";

function limiter(opts: RateLimitOptions) {
  const clock = new FakeClock();
  return { clock, rl: new RateLimiter(opts, clock) };
}

/** Take `n` tokens for `key` and return how many were allowed. */
function takeMany(rl: RateLimiter, key: string, n: number): number {
  let ok = 0;
  for (let i = 0; i < n; i++) if (rl.take(key).ok) ok++;
  return ok;
}

describe("RateLimiter", () => {
  it("allows a burst of `burst` requests at once, then refuses", () => {
    const { rl } = limiter({ requests: 200, windowMs: 60_000, burst: 50 });
    expect(takeMany(rl, "1.2.3.4", 50)).toBe(50);
    const refused = rl.take("1.2.3.4");
    expect(refused.ok).toBe(false);
    expect(refused.retryAfter).toBeGreaterThanOrEqual(1);
  });

  it("answers an allowed request with retryAfter 0", () => {
    const { rl } = limiter({ requests: 10, windowMs: 1000, burst: 1 });
    expect(rl.take("k")).toEqual({ ok: true, retryAfter: 0 });
  });

  it("refills at requests per window", () => {
    // 60 per minute: one token per second
    const { clock, rl } = limiter({ requests: 60, windowMs: 60_000, burst: 5 });
    expect(takeMany(rl, "k", 5)).toBe(5);
    expect(rl.take("k").ok).toBe(false);
    clock.advance(999);
    expect(rl.take("k").ok).toBe(false);
    clock.advance(1);
    expect(rl.take("k").ok).toBe(true);
    expect(rl.take("k").ok).toBe(false);
    clock.advance(3000);
    expect(takeMany(rl, "k", 10)).toBe(3);
  });

  it("never refills beyond the burst", () => {
    const { clock, rl } = limiter({ requests: 60, windowMs: 60_000, burst: 5 });
    expect(takeMany(rl, "k", 5)).toBe(5);
    clock.advance(3_600_000);
    expect(takeMany(rl, "k", 20)).toBe(5);
  });

  it("sustains exactly `requests` per window after the burst is spent", () => {
    const { clock, rl } = limiter({ requests: 200, windowMs: 60_000, burst: 50 });
    expect(takeMany(rl, "k", 50)).toBe(50);
    let ok = 0;
    for (let t = 0; t < 60_000; t += 100) {
      clock.advance(100);
      ok += takeMany(rl, "k", 5);
    }
    expect(ok).toBeGreaterThanOrEqual(199);
    expect(ok).toBeLessThanOrEqual(200);
  });

  it("does not spend a token on a refused request", () => {
    const { clock, rl } = limiter({ requests: 1, windowMs: 10_000, burst: 1 });
    expect(rl.take("k").ok).toBe(true);
    expect(takeMany(rl, "k", 100)).toBe(0);
    clock.advance(10_000);
    expect(rl.take("k").ok).toBe(true);
  });

  it("says how many whole seconds until the next token, rounded up", () => {
    // one token per 90.5 s
    const { clock, rl } = limiter({ requests: 1, windowMs: 90_500, burst: 1 });
    rl.take("k");
    expect(rl.take("k").retryAfter).toBe(91);
    clock.advance(30_000);
    expect(rl.take("k").retryAfter).toBe(61);
    clock.advance(60_000);
    expect(rl.take("k").retryAfter).toBe(1);
  });

  it("says at least one second even when the next token is milliseconds away", () => {
    // 200 per 60 s: a token every 300 ms
    const { clock, rl } = limiter({ requests: 200, windowMs: 60_000, burst: 1 });
    rl.take("k");
    expect(rl.take("k").retryAfter).toBe(1);
    clock.advance(299);
    const r = rl.take("k");
    expect(r.ok).toBe(false);
    expect(r.retryAfter).toBe(1);
  });

  it("keeps keys independent", () => {
    const { rl } = limiter({ requests: 1, windowMs: 60_000, burst: 2 });
    expect(takeMany(rl, "a", 3)).toBe(2);
    expect(takeMany(rl, "b", 3)).toBe(2);
    expect(rl.take("a").ok).toBe(false);
    expect(rl.size).toBe(2);
  });

  it("treats a burst below one as one", () => {
    const { rl } = limiter({ requests: 10, windowMs: 1000, burst: 0 });
    expect(takeMany(rl, "k", 3)).toBe(1);
  });

  it("holds at most maxKeys keys however many clients arrive", () => {
    const { clock, rl } = limiter({ requests: 1, windowMs: 60_000, burst: 1, maxKeys: 100 });
    for (let i = 0; i < 5000; i++) {
      rl.take(`10.0.${i >> 8}.${i & 255}`);
      expect(rl.size).toBeLessThanOrEqual(100);
      if (i % 7 === 0) clock.advance(1);
    }
    expect(rl.size).toBeGreaterThan(0);
  });

  it("forgets fully refilled buckets before limited ones when full", () => {
    const { clock, rl } = limiter({ requests: 1, windowMs: 10_000, burst: 2, maxKeys: 3 });
    // "limited" is the least recently used key but still owes a token; the others only used one of two
    expect(takeMany(rl, "limited", 2)).toBe(2);
    rl.take("idle-1");
    rl.take("idle-2");
    clock.advance(10_000);
    // idle-1 and idle-2 are full again; limited has one of two tokens
    rl.take("newcomer");
    expect(rl.size).toBeLessThanOrEqual(3);
    expect(rl.take("limited").ok).toBe(true);
    expect(rl.take("limited").ok).toBe(false);
  });

  it("drops the least recently used keys when none has refilled", () => {
    const { rl } = limiter({ requests: 1, windowMs: 3_600_000, burst: 1, maxKeys: 10 });
    for (let i = 0; i < 10; i++) rl.take(`k${i}`);
    // touch k0 so it is the most recent
    rl.take("k0");
    rl.take("new");
    expect(rl.size).toBeLessThanOrEqual(10);
    // k0 was kept and is still limited; k1, the least recent, was forgotten and starts fresh
    expect(rl.take("k0").ok).toBe(false);
    expect(rl.take("k1").ok).toBe(true);
  });
});
