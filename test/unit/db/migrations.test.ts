/** The embedded migrations are exactly the drizzle journal's, in order, with each SQL file unchanged. */
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS } from "../../../src/db/migrations";
import journal from "../../../src/db/migrations/meta/_journal.json";

const DIR = join(import.meta.dir, "../../../src/db/migrations");

describe("embedded migrations", () => {
  it("list exactly the tags of the drizzle journal, in journal order", () => {
    const tags = [...journal.entries].sort((a, b) => a.idx - b.idx).map((e) => e.tag);
    expect(MIGRATIONS.map((m) => m.tag)).toEqual(tags);
  });

  it("embed the SQL file of each tag unchanged", () => {
    for (const m of MIGRATIONS) expect(m.sql).toBe(readFileSync(join(DIR, `${m.tag}.sql`), "utf8"));
  });

  it("have unique tags", () => {
    expect(new Set(MIGRATIONS.map((m) => m.tag)).size).toBe(MIGRATIONS.length);
  });
});
