/** Tables of users, their API keys, their app grants, and login lockout state. */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const users = sqliteTable(
  "users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** Unique without regard to case: "Alice" and "alice" are one account. */
    username: text("username").notNull(),
    passwordHash: text("password_hash").notNull(),
    role: text("role", { enum: ["super_admin", "admin", "manage", "viewer"] }).notNull(),
    /** Bumped on logout, password change and role change; sessions carrying an older value are refused. */
    tokenVersion: integer("token_version").notNull().default(1),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("users_username_lower").on(sql`lower(${t.username})`)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** HMAC-SHA256 of the key under a key derived from master_secret; the key itself is never stored. */
    keyHash: text("key_hash").notNull().unique(),
    /** First characters of the key, to recognise it in a listing. */
    prefix: text("prefix").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at"),
    lastUsedAt: text("last_used_at"),
  },
  (t) => [index("api_keys_user").on(t.userId)],
);

export const appAccess = sqliteTable(
  "app_access",
  {
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    appSlug: text("app_slug").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.appSlug] }), index("app_access_slug").on(t.appSlug)],
);

export const loginFailures = sqliteTable(
  "login_failures",
  {
    username: text("username").notNull(),
    ip: text("ip").notNull(),
    failures: integer("failures").notNull(),
    /** Epoch ms until which the pair is locked; 0 when not locked. */
    lockedUntil: integer("locked_until").notNull().default(0),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.username, t.ip] })],
);
