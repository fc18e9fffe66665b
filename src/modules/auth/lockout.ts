/**
 * Login throttling. Per IP: 10 attempts a minute (in memory). Per (username, IP): 5 consecutive failures lock the
 * pair for 1 minute, doubling with each further failure up to 30 minutes; a success clears it. The lock state
 * lives in the database, so a restart does not reset it.
 */
import { and, eq, lt } from "drizzle-orm";
import type { Db } from "../../db";
import { loginFailures } from "../../db/schema";
import { RateLimiter } from "../../lib/ratelimit";
import type { Clock } from "../../lib/time";

export const LOCK_AFTER = 5;
export const FIRST_LOCK_MS = 60_000;
export const MAX_LOCK_MS = 30 * 60_000;

/** Lock length after `failures` consecutive failures (0 below the threshold). */
export function lockDuration(failures: number): number {
  if (failures < LOCK_AFTER) return 0;
  return Math.min(MAX_LOCK_MS, FIRST_LOCK_MS * 2 ** (failures - LOCK_AFTER));
}

/** Build the login guard. */
export function createLoginGuard(db: Db, clock: Clock) {
  const perIp = new RateLimiter({ requests: 10, windowMs: 60_000, burst: 10, maxKeys: 50_000 }, clock);
  const key = (username: string) => username.trim().toLowerCase().slice(0, 128);
  const row = (username: string, ip: string) =>
    db.orm
      .select()
      .from(loginFailures)
      .where(and(eq(loginFailures.username, key(username)), eq(loginFailures.ip, ip)))
      .get();

  return {
    /** Take one login attempt from the IP's allowance. */
    rate: (ip: string) => perIp.take(ip),

    /** Whether the pair is locked now. */
    isLocked(username: string, ip: string): boolean {
      const r = row(username, ip);
      return !!r && r.lockedUntil > clock.now();
    },

    /** Count a wrong password; locks the pair once the threshold is reached. */
    failed(username: string, ip: string): void {
      const now = clock.now();
      const failures = (row(username, ip)?.failures ?? 0) + 1;
      const lock = lockDuration(failures);
      db.orm
        .insert(loginFailures)
        .values({ username: key(username), ip, failures, lockedUntil: lock ? now + lock : 0, updatedAt: now })
        .onConflictDoUpdate({
          target: [loginFailures.username, loginFailures.ip],
          set: { failures, lockedUntil: lock ? now + lock : 0, updatedAt: now },
        })
        .run();
    },

    /** A successful login clears the pair. */
    succeeded(username: string, ip: string): void {
      db.orm
        .delete(loginFailures)
        .where(and(eq(loginFailures.username, key(username)), eq(loginFailures.ip, ip)))
        .run();
    },

    /** Forget pairs untouched for a day and not locked (run with the nightly jobs). */
    prune(): void {
      const now = clock.now();
      db.orm
        .delete(loginFailures)
        .where(and(lt(loginFailures.updatedAt, now - 86_400_000), lt(loginFailures.lockedUntil, now)))
        .run();
    },
  };
}

export type LoginGuard = ReturnType<typeof createLoginGuard>;
