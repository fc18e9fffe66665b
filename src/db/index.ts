/**
 * The one place SQLite is opened: private file mode, WAL, busy timeout, foreign keys, embedded migrations applied
 * one transaction each. Everything else receives the handle from the composition root.
 */
import { Database } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import { ensurePrivateDir } from "../lib/fs";
import { MIGRATIONS, type Migration } from "./migrations";
import * as schema from "./schema";

export type Orm = BunSQLiteDatabase<typeof schema>;

/** An open database: the raw handle (for hot paths and pragmas) and drizzle on top of it. */
export interface Db {
  /** File path, or ":memory:". */
  path: string;
  sqlite: Database;
  orm: Orm;
  /** Run `fn` in one IMMEDIATE transaction; the change and its activity entry commit together. */
  tx<T>(fn: () => T): T;
  close(): void;
}

/** Open (creating with mode 0600 if needed) and migrate the database at `path`; ":memory:" for a throwaway one. */
export function openDb(path: string, migrations: readonly Migration[] = MIGRATIONS): Db {
  if (path !== ":memory:") {
    ensurePrivateDir(dirname(path));
    if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
    chmodSync(path, 0o600);
  }
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.run("PRAGMA journal_mode = WAL");
  sqlite.run("PRAGMA busy_timeout = 5000");
  sqlite.run("PRAGMA foreign_keys = ON");
  sqlite.run("PRAGMA synchronous = NORMAL");
  // a large delete must not leave a WAL of the same size behind once it is checkpointed
  sqlite.run("PRAGMA journal_size_limit = 67108864");
  migrate(sqlite, migrations);
  const orm = drizzle(sqlite, { schema });
  return {
    path,
    sqlite,
    orm,
    tx: <T>(fn: () => T) => sqlite.transaction(fn).immediate() as T,
    close: () => {
      try {
        sqlite.close();
      } catch {
        // already closed
      }
    },
  };
}

/** The database was migrated by a newer sundeck: this binary does not know some of its migrations. */
export class DowngradeError extends Error {
  constructor(readonly unknown: string[]) {
    super(
      `the database has migrations this sundeck does not know (${unknown.join(", ")}): it was written by a newer ` +
        "version; refusing to start rather than risk it (reinstall the newer version, e.g. with sundeck upgrade)",
    );
    this.name = "DowngradeError";
  }
}

/**
 * Apply the migrations not yet recorded, each in its own transaction with its record. Throws DowngradeError, before
 * touching anything, when the database records a migration `migrations` does not have.
 */
export function migrate(sqlite: Database, migrations: readonly Migration[]): string[] {
  sqlite.run("CREATE TABLE IF NOT EXISTS schema_migrations (tag TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  const done = new Set(
    sqlite
      .query<{ tag: string }, []>("SELECT tag FROM schema_migrations")
      .all()
      .map((r) => r.tag),
  );
  // migrations are forward-only: a database a newer sundeck migrated is left untouched by an older one
  const known = new Set(migrations.map((m) => m.tag));
  const unknown = [...done].filter((t) => !known.has(t)).sort();
  if (unknown.length) throw new DowngradeError(unknown);
  const applied: string[] = [];
  for (const m of migrations) {
    if (done.has(m.tag)) continue;
    sqlite
      .transaction(() => {
        for (const stmt of m.sql.split("--> statement-breakpoint")) {
          if (stmt.trim()) sqlite.run(stmt);
        }
        sqlite.run("INSERT INTO schema_migrations (tag, applied_at) VALUES (?, ?)", [m.tag, new Date().toISOString()]);
      })
      .immediate();
    applied.push(m.tag);
  }
  return applied;
}
