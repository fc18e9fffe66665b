/**
 * Token-bucket rate limiting keyed by an arbitrary string (client IP, header value, path). Each key holds `burst`
 * tokens refilled at `requests` per `window`; memory is bounded by dropping refilled and then least-recent keys.
 */
import type { Clock } from "./time";

export interface RateLimitOptions {
  /** Tokens added per window. */
  requests: number;
  /** Window length in ms. */
  windowMs: number;
  /** Bucket capacity: how many requests may arrive at once. */
  burst: number;
  /** Most keys held at once; beyond it the least recently used are forgotten. */
  maxKeys?: number;
}

export interface RateDecision {
  ok: boolean;
  /** When refused: whole seconds until one token is available (at least 1). */
  retryAfter: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** A bounded map of token buckets. */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly capacity: number;
  private readonly maxKeys: number;

  constructor(
    opts: RateLimitOptions,
    private readonly clock: Clock,
  ) {
    this.perMs = opts.requests / opts.windowMs;
    this.capacity = Math.max(1, opts.burst);
    this.maxKeys = opts.maxKeys ?? 100_000;
  }

  /** Take one token for `key`. */
  take(key: string): RateDecision {
    const now = this.clock.now();
    let b = this.buckets.get(key);
    if (b) {
      this.buckets.delete(key);
      b.tokens = Math.min(this.capacity, b.tokens + (now - b.at) * this.perMs);
      b.at = now;
    } else {
      if (this.buckets.size >= this.maxKeys) this.evict(now);
      b = { tokens: this.capacity, at: now };
    }
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true, retryAfter: 0 };
    }
    const waitMs = this.perMs > 0 ? (1 - b.tokens) / this.perMs : 3_600_000;
    return { ok: false, retryAfter: Math.max(1, Math.ceil(waitMs / 1000)) };
  }

  /** Number of keys held (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  private evict(now: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + (now - b.at) * this.perMs >= this.capacity) this.buckets.delete(k);
    }
    // still full: drop the least recently used tenth
    if (this.buckets.size >= this.maxKeys) {
      let drop = Math.ceil(this.maxKeys / 10);
      for (const k of this.buckets.keys()) {
        if (drop-- <= 0) break;
        this.buckets.delete(k);
      }
    }
  }
}
