/**
 * Per-app rate limiting on the proxy: one token-bucket RateLimiter per app, rebuilt only when that app's settings
 * change and dropped when the app leaves the route table; each bounded in keys.
 */

import { type RateDecision, RateLimiter } from "../lib/ratelimit";
import type { Clock } from "../lib/time";
import type { HeaderSource } from "./headers";
import type { RouteRateLimit } from "./route-table";

/** The bucket key of a request: the client address, a header's value (the address when absent), or the path. */
export function rateKey(rl: RouteRateLimit, headers: HeaderSource, clientIp: string, path: string): string {
  if (rl.header !== null) {
    const v = headers.get(rl.header);
    // keys are namespaced so a header value can never share a bucket with an address
    return v === null ? `ip:${clientIp}` : `h:${v}`;
  }
  return rl.by === "path" ? path : clientIp;
}

/** The rate limiters of every app. */
export class AppLimiters {
  private readonly byApp = new Map<string, { id: string; limiter: RateLimiter }>();

  constructor(
    private readonly clock: Clock,
    /** Most keys per app. */
    private readonly maxKeys = 20_000,
  ) {}

  /** Take a token for `key` from `app`'s limiter (built on first use or when `rl` changed). */
  take(app: string, rl: RouteRateLimit, key: string): RateDecision {
    let entry = this.byApp.get(app);
    if (entry === undefined || entry.id !== rl.id) {
      entry = {
        id: rl.id,
        limiter: new RateLimiter(
          { requests: rl.requests, windowMs: rl.windowMs, burst: rl.burst, maxKeys: this.maxKeys },
          this.clock,
        ),
      };
      this.byApp.set(app, entry);
    }
    return entry.limiter.take(key);
  }

  /** Forget apps that are no longer routed. */
  retain(apps: ReadonlySet<string>): void {
    for (const app of this.byApp.keys()) if (!apps.has(app)) this.byApp.delete(app);
  }

  /** Apps with a limiter (for tests). */
  get size(): number {
    return this.byApp.size;
  }
}
