/** Migrations are forward-only: a sundeck older than the database's last migration refuses it and changes nothing. */
import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { DowngradeError, openDb } from "../../../src/db";
import { MIGRATIONS } from "../../../src/db/migrations";
import { tempDir } from "../../helpers/tmp";

describe("a database from a newer sundeck", () => {
  it("is refused by an older binary, naming the unknown migration, and left as it was", () => {
    const path = join(tempDir(), "sundeck.db");
    // the newer binary: one migration more than the older one knows
    const newer = [...MIGRATIONS, { tag: "9999_future", sql: "CREATE TABLE future_things (id INTEGER PRIMARY KEY);" }];
    openDb(path, newer).close();

    let thrown: unknown;
    try {
      openDb(path, MIGRATIONS).close();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(DowngradeError);
    expect((thrown as Error).message).toContain("9999_future");
    expect((thrown as Error).message).toContain("newer version");

    // nothing was dropped or recorded: the newer binary opens it again as it left it
    const again = openDb(path, newer);
    const tags = again.sqlite.query<{ tag: string }, []>("SELECT tag FROM schema_migrations").all();
    expect(tags.map((t) => t.tag)).toContain("9999_future");
    expect(again.sqlite.query("SELECT name FROM sqlite_master WHERE name = 'future_things'").get()).toBeTruthy();
    again.close();
  });

  it("opens normally when it only lacks migrations the binary will apply", () => {
    const path = join(tempDir(), "sundeck.db");
    openDb(path, MIGRATIONS.slice(0, 2)).close();
    const db = openDb(path, MIGRATIONS);
    expect(db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM schema_migrations").get()?.n).toBe(MIGRATIONS.length);
    db.close();
  });
});
