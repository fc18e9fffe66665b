/** The database opens private, in WAL with foreign keys; tx commits whole; each migration applies atomically, once. */
import { Database } from "bun:sqlite";
import { describe, expect, it } from "bun:test";
import { chmodSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Db, migrate, openDb } from "../../../src/db";
import type { Migration } from "../../../src/db/migrations";
import { MIGRATIONS } from "../../../src/db/migrations";
import { tempDir } from "../../helpers/tmp";

const BREAK = "--> statement-breakpoint";

/** Open a database in a fresh directory and close it when `fn` is done. */
function withDb<T>(fn: (db: Db, path: string) => T, migrations?: readonly Migration[]): T {
  const path = join(tempDir(), "sundeck.db");
  const db = openDb(path, migrations);
  try {
    return fn(db, path);
  } finally {
    db.close();
  }
}

const tables = (sqlite: Database) =>
  sqlite
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all()
    .map((r) => r.name);

const appliedTags = (sqlite: Database) =>
  sqlite
    .query<{ tag: string }, []>("SELECT tag FROM schema_migrations ORDER BY tag")
    .all()
    .map((r) => r.tag);

describe("openDb", () => {
  it("creates the database file with mode 0600", () => {
    withDb((_db, path) => {
      expect(existsSync(path)).toBe(true);
      expect(statSync(path).mode & 0o777).toBe(0o600);
    });
  });

  it("creates a missing parent directory with mode 0700", () => {
    const dir = join(tempDir(), "data");
    const db = openDb(join(dir, "sundeck.db"));
    db.close();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it("tightens an existing database file to mode 0600", () => {
    const path = join(tempDir(), "sundeck.db");
    new Database(path, { create: true }).close();
    chmodSync(path, 0o644);
    openDb(path).close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("keeps the WAL file as private as the database", () => {
    withDb((db, path) => {
      db.sqlite.run("INSERT INTO settings (key, value, updated_at) VALUES ('k', 'v', 'now')");
      expect(existsSync(`${path}-wal`)).toBe(true);
      expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    });
  });

  it("uses WAL journaling", () => {
    withDb((db) => {
      expect(db.sqlite.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    });
  });

  it("turns foreign keys on", () => {
    withDb((db) => {
      expect(db.sqlite.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys).toBe(1);
    });
  });

  it("enforces foreign keys", () => {
    const migrations: Migration[] = [
      {
        tag: "0000_fk",
        sql: `CREATE TABLE parent (id INTEGER PRIMARY KEY);${BREAK}CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent(id));`,
      },
    ];
    withDb((db) => {
      expect(() => db.sqlite.run("INSERT INTO child (id, parent_id) VALUES (1, 99)")).toThrow(/FOREIGN KEY/i);
    }, migrations);
  });

  it("sets a busy timeout so a locked database waits instead of failing at once", () => {
    withDb((db) => {
      const timeout = db.sqlite.query<{ timeout: number }, []>("PRAGMA busy_timeout").get()?.timeout ?? 0;
      expect(timeout).toBeGreaterThanOrEqual(1000);
    });
  });

  it("applies the embedded migrations, creating their tables", () => {
    withDb((db) => {
      const names = tables(db.sqlite);
      for (const t of ["users", "api_keys", "activity", "settings", "schema_migrations"]) expect(names).toContain(t);
      expect(appliedTags(db.sqlite)).toEqual(MIGRATIONS.map((m) => m.tag).sort());
    });
  });

  it("applies nothing on a second open", () => {
    const path = join(tempDir(), "sundeck.db");
    openDb(path).close();
    const db = openDb(path);
    try {
      expect(migrate(db.sqlite, MIGRATIONS)).toEqual([]);
      expect(appliedTags(db.sqlite)).toEqual(MIGRATIONS.map((m) => m.tag).sort());
    } finally {
      db.close();
    }
  });

  it("keeps data across reopen", () => {
    const path = join(tempDir(), "sundeck.db");
    const a = openDb(path);
    a.sqlite.run("INSERT INTO settings (key, value, updated_at) VALUES ('public_host', 'example.com', 'now')");
    a.close();
    const b = openDb(path);
    try {
      expect(b.sqlite.query<{ value: string }, []>("SELECT value FROM settings WHERE key = 'public_host'").get()?.value).toBe(
        "example.com",
      );
    } finally {
      b.close();
    }
  });

  it("opens a throwaway in-memory database", () => {
    const db = openDb(":memory:");
    try {
      expect(tables(db.sqlite)).toContain("users");
    } finally {
      db.close();
    }
  });

  it("commits everything done in tx together", () => {
    withDb((db) => {
      db.tx(() => {
        db.sqlite.run("INSERT INTO settings (key, value, updated_at) VALUES ('a', '1', 'now')");
        db.sqlite.run("INSERT INTO settings (key, value, updated_at) VALUES ('b', '2', 'now')");
      });
      expect(db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM settings").get()?.n).toBe(2);
    });
  });

  it("rolls back everything done in tx when it throws", () => {
    withDb((db) => {
      expect(() =>
        db.tx(() => {
          db.sqlite.run("INSERT INTO settings (key, value, updated_at) VALUES ('a', '1', 'now')");
          throw new Error("change failed");
        }),
      ).toThrow("change failed");
      expect(db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM settings").get()?.n).toBe(0);
    });
  });
});

describe("migrate", () => {
  const good: Migration = {
    tag: "0000_good",
    sql: `CREATE TABLE one (id INTEGER PRIMARY KEY);${BREAK}\nCREATE TABLE two (id INTEGER);`,
  };
  const broken: Migration = {
    tag: "0001_broken",
    sql: `CREATE TABLE three (id INTEGER PRIMARY KEY);${BREAK}\nCREATE TABLE four (id INTEGER REFERENCES;`,
  };

  it("applies every statement of a migration and records its tag once", () => {
    const sqlite = new Database(":memory:");
    expect(migrate(sqlite, [good])).toEqual(["0000_good"]);
    expect(tables(sqlite)).toEqual(["one", "schema_migrations", "two"]);
    expect(migrate(sqlite, [good])).toEqual([]);
    expect(appliedTags(sqlite)).toEqual(["0000_good"]);
    sqlite.close();
  });

  it("applies only the migrations not yet recorded, in order", () => {
    const sqlite = new Database(":memory:");
    migrate(sqlite, [good]);
    const next: Migration = { tag: "0001_next", sql: "ALTER TABLE one ADD COLUMN name TEXT;" };
    expect(migrate(sqlite, [good, next])).toEqual(["0001_next"]);
    expect(appliedTags(sqlite)).toEqual(["0000_good", "0001_next"]);
    sqlite.close();
  });

  it("rolls back a failing migration entirely and does not record it", () => {
    const path = join(tempDir(), "sundeck.db");
    expect(() => openDb(path, [good, broken])).toThrow();
    const sqlite = new Database(path);
    try {
      const names = tables(sqlite);
      expect(names).not.toContain("three");
      expect(names).not.toContain("four");
      expect(appliedTags(sqlite)).toEqual(["0000_good"]);
    } finally {
      sqlite.close();
    }
  });

  it("keeps earlier migrations applied when a later one fails", () => {
    const sqlite = new Database(":memory:");
    expect(() => migrate(sqlite, [good, broken])).toThrow();
    expect(tables(sqlite)).toEqual(["one", "schema_migrations", "two"]);
    sqlite.close();
  });

  it("applies a fixed migration after a failed one", () => {
    const sqlite = new Database(":memory:");
    expect(() => migrate(sqlite, [good, broken])).toThrow();
    const fixed: Migration = { tag: "0001_broken", sql: "CREATE TABLE three (id INTEGER PRIMARY KEY);" };
    expect(migrate(sqlite, [good, fixed])).toEqual(["0001_broken"]);
    expect(tables(sqlite)).toContain("three");
    sqlite.close();
  });

  it("skips empty statements between breakpoints", () => {
    const sqlite = new Database(":memory:");
    expect(migrate(sqlite, [{ tag: "0000_e", sql: `${BREAK}\n\nCREATE TABLE only_one (id INTEGER);${BREAK}\n  \n` }])).toEqual([
      "0000_e",
    ]);
    expect(tables(sqlite)).toContain("only_one");
    sqlite.close();
  });
});
