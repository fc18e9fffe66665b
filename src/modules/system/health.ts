/** Liveness with a real database round trip. */
import { existsSync } from "node:fs";
import type { Db } from "../../db";

/**
 * Whether the database answers a read of a real table and its file is still in place (an open handle on a deleted
 * file keeps answering, but nothing written would survive a restart).
 */
export function databaseReachable(db: Db): boolean {
  try {
    if (db.path !== ":memory:" && !existsSync(db.path)) return false;
    return db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM schema_migrations").get()!.n > 0;
  } catch {
    return false;
  }
}
