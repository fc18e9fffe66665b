/**
 * API keys: `sd_` + 64 hex (32 random bytes), shown once, stored only as a keyed HMAC-SHA256. A key acts as its
 * owner, with the owner's current role and grants; an expired key is refused.
 */
import { asc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db";
import { apiKeys, users } from "../../db/schema";
import { hmacHex, randomHex } from "../../lib/crypto";
import { badRequest, notFound } from "../../lib/errors";
import { type Clock, iso } from "../../lib/time";
import type { ApiKey, CreatedApiKey } from "../../shared/apikeys";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";

export const KEY_PATTERN = /^sd_[0-9a-f]{64}$/;
const PREFIX_LEN = 10;
/** last_used_at is written at most this often per key, so requests do not each cost a write. */
const TOUCH_EVERY_MS = 60_000;

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** The wire form of a key (never the key or its hash). */
export function keyJson(k: ApiKeyRow, owner?: string): ApiKey {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    ...(owner !== undefined ? { username: owner } : {}),
    created_at: k.createdAt,
    expires_at: k.expiresAt,
    last_used_at: k.lastUsedAt,
  };
}

export interface ApiKeyDeps {
  db: Db;
  clock: Clock;
  hmacKey: Buffer;
  activity: Activity;
}

/** Build the API key service. */
export function createApiKeys({ db, clock, hmacKey, activity }: ApiKeyDeps) {
  const hash = (key: string) => hmacHex(hmacKey, key);
  // every request with a key, every stream upgrade and every open stream's recheck looks one up: one statement for
  // the process (a drizzle query run unprepared compiles a new SQLite statement each time, freed only by the collector)
  const byHash = db.orm
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, sql.placeholder("hash")))
    .prepare();

  return {
    /** Create a key for `userId`; the only time the key itself is returned. */
    create(owner: { id: number; username: string }, name: string, expiresAt: string | null, actor: Actor): CreatedApiKey {
      const clean = name.trim();
      if (!clean || clean.length > 100) throw badRequest("name must be 1 to 100 characters");
      if (expiresAt !== null) {
        const t = Date.parse(expiresAt);
        if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(expiresAt)) throw badRequest("expires_at must be an RFC 3339 time");
        if (t <= clock.now()) throw badRequest("expires_at must be in the future");
        expiresAt = iso(t);
      }
      const key = `sd_${randomHex(32)}`;
      const now = iso(clock.now());
      const row = db.tx(() => {
        const r = db.orm
          .insert(apiKeys)
          .values({
            userId: owner.id,
            name: clean,
            keyHash: hash(key),
            prefix: key.slice(0, PREFIX_LEN),
            createdAt: now,
            expiresAt,
          })
          .returning()
          .get();
        activity.record({
          actor,
          category: "system",
          action: "apikey_created",
          target: clean,
          summary: `${actor.name} created API key "${clean}"${owner.username !== actor.name ? ` for ${owner.username}` : ""}`,
          after: { id: r.id, name: r.name, user: owner.username, expires_at: r.expiresAt },
        });
        return r;
      });
      return { ...keyJson(row), key };
    },

    /** Keys of one user, or of everyone (`userId` null) with owners. */
    list(userId: number | null): ApiKey[] {
      const q = db.orm
        .select({ k: apiKeys, username: users.username })
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .orderBy(asc(apiKeys.id));
      const rows = userId === null ? q.all() : q.where(eq(apiKeys.userId, userId)).all();
      return rows.map((r) => keyJson(r.k, r.username));
    },

    /** Revoke a key. Non-super-admins may only revoke their own (others' keys are "not found"). */
    revoke(id: number, caller: { id: number; mayRevokeAny: boolean }, actor: Actor): void {
      db.tx(() => {
        const row = db.orm
          .select({ k: apiKeys, username: users.username })
          .from(apiKeys)
          .innerJoin(users, eq(users.id, apiKeys.userId))
          .where(eq(apiKeys.id, id))
          .get();
        if (!row || (!caller.mayRevokeAny && row.k.userId !== caller.id)) throw notFound();
        db.orm.delete(apiKeys).where(eq(apiKeys.id, id)).run();
        activity.record({
          actor,
          category: "system",
          action: "apikey_revoked",
          target: row.k.name,
          summary: `${actor.name} revoked API key "${row.k.name}"${row.username !== actor.name ? ` of ${row.username}` : ""}`,
          before: { id: row.k.id, name: row.k.name, user: row.username, expires_at: row.k.expiresAt },
        });
      });
    },

    /** The key row and owner id for a presented key, or null when unknown or expired. */
    verify(key: string): { keyId: number; userId: number } | null {
      if (!KEY_PATTERN.test(key)) return null;
      const row = byHash.get({ hash: hash(key) });
      if (!row) return null;
      const now = clock.now();
      if (row.expiresAt && Date.parse(row.expiresAt) <= now) return null;
      if (!row.lastUsedAt || now - Date.parse(row.lastUsedAt) > TOUCH_EVERY_MS) {
        db.orm
          .update(apiKeys)
          .set({ lastUsedAt: iso(now) })
          .where(eq(apiKeys.id, row.id))
          .run();
      }
      return { keyId: row.id, userId: row.userId };
    },
  };
}

export type ApiKeys = ReturnType<typeof createApiKeys>;
