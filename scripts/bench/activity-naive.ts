/**
 * The baseline: what most implementations of the activity list would write. One statement per page, every filter
 * folded into the WHERE clause with IN lists and an OR for visibility, `ORDER BY id DESC LIMIT n + 1`, left to the
 * query planner. Same database, same indexes, same page envelope as the real service.
 */
import type { Database } from "bun:sqlite";
import type { ListFilter, Visibility } from "../../src/modules/activity/service";

const COLS =
  "id, app_slug, actor_name, actor_source, ip, category, action, target, summary, error, compose_version_id, " +
  "sync_status, sync_commit_sha, sync_error, created_at";

interface Row {
  id: number;
  app_slug: string | null;
  category: string;
  [k: string]: unknown;
}

const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");

/** The single naive statement for a filter and visibility, with its parameters. */
export function naiveSql(f: ListFilter, vis: Visibility): { sql: string; params: (string | number)[] } {
  const conds: string[] = [];
  const params: (string | number)[] = [];
  if (f.app) {
    conds.push("app_slug = ?");
    params.push(f.app);
  }
  if (f.categories?.length) {
    conds.push(`category IN (${marks(f.categories.length)})`);
    params.push(...f.categories);
  }
  if (!vis.all) {
    conds.push(
      `(app_slug IN (${vis.slugs.length ? marks(vis.slugs.length) : "NULL"}) OR (actor_user_id = ? AND category = 'auth'))`,
    );
    params.push(...vis.slugs, vis.userId);
  }
  conds.push("id < ?");
  params.push(f.before ?? Number.MAX_SAFE_INTEGER, f.limit + 1);
  return { sql: `SELECT ${COLS} FROM activity WHERE ${conds.join(" AND ")} ORDER BY id DESC LIMIT ?`, params };
}

/** The naive reader, with the same return shapes as the service. */
export function createNaiveActivity(sqlite: Database) {
  return {
    list(f: ListFilter, vis: Visibility): { entries: Row[]; next_before: number | null } {
      const { sql, params } = naiveSql(f, vis);
      const rows = sqlite.query<Row, (string | number)[]>(sql).all(...params);
      const more = rows.length > f.limit;
      const entries = more ? rows.slice(0, f.limit) : rows;
      return { entries, next_before: more ? entries[entries.length - 1].id : null };
    },

    get(id: number, vis: Visibility): Row | null {
      const r = sqlite
        .query<Row & { before_json: string | null; after_json: string | null; actor_user_id: number | null }, [number]>(
          `SELECT ${COLS}, before_json, after_json, actor_user_id FROM activity WHERE id = ?`,
        )
        .get(id);
      if (!r) return null;
      const ok =
        vis.all ||
        (r.app_slug !== null && vis.slugs.includes(r.app_slug)) ||
        (r.category === "auth" && r.actor_user_id === vis.userId);
      if (!ok) return null;
      const { actor_user_id: _, before_json, after_json, ...rest } = r;
      return {
        ...rest,
        before_json: before_json ? JSON.parse(before_json) : null,
        after_json: after_json ? JSON.parse(after_json) : null,
      };
    },
  };
}
