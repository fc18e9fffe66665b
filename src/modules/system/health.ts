/** Liveness with a real database round trip. */
import type { Db } from "../../db";

/** Whether the database answers a query. */
export function databaseReachable(db: Db): boolean {
  try {
    return db.sqlite.query<{ ok: number }, []>("SELECT 1 AS ok").get()?.ok === 1;
  } catch {
    return false;
  }
}
