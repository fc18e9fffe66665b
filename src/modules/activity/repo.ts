/**
 * Activity storage on raw prepared statements (the hot read path). A list is a union of covering-index walks, one per
 * combination of equality filters, merged on ids in id order and stopped after one page; only that page's rows are
 * then read. A page costs about the same on 10 or 10 million rows (scripts/bench/activity.ts).
 */
import type { Database } from "bun:sqlite";
import type { ActivityEntry } from "../../shared/schemas/activity";
import type { Category } from "./model";

/** A listed row is the wire entry as it is (the list columns are its fields). */
export type ActivityRow = ActivityEntry;

export interface ActivityDetailRow extends ActivityRow {
  before_json: string | null;
  after_json: string | null;
  actor_user_id: number | null;
}

/** Which entries a caller may see: everything, or granted apps plus the caller's own auth entries. */
export type Visibility = { all: true } | { all: false; userId: number; slugs: readonly string[] };

export interface ListFilter {
  categories?: readonly Category[];
  app?: string;
  /** Exclusive id cursor. */
  before?: number;
  limit: number;
}

const LIST_COLS =
  "id, app_slug, actor_name, actor_source, ip, category, action, target, summary, error, compose_version_id, " +
  "sync_status, sync_commit_sha, sync_error, created_at";
/** SQLite allows 500 terms in a compound SELECT; past this many branches one walk of the primary key is used. */
const MAX_BRANCHES = 400;
const NO_CURSOR = Number.MAX_SAFE_INTEGER;

type Eq = { app_slug?: string; category?: string; actor_user_id?: number };

/** Combine two equality sets; null when they contradict each other. */
function meet(a: Eq, b: Eq): Eq | null {
  const out: Eq = { ...a };
  for (const [k, v] of Object.entries(b) as [keyof Eq, never][]) {
    if (out[k] !== undefined && out[k] !== v) return null;
    out[k] = v;
  }
  return out;
}

/** The equality branches whose union is the filtered, visible set. */
export function branches(f: ListFilter, vis: Visibility): Eq[] {
  let sets: Eq[] = [f.app ? { app_slug: f.app } : {}];
  const cross = (opts: Eq[]) => {
    const next: Eq[] = [];
    for (const s of sets)
      for (const o of opts) {
        const m = meet(s, o);
        if (m) next.push(m);
      }
    sets = next;
  };
  if (f.categories?.length) cross(f.categories.map((c) => ({ category: c })));
  if (!vis.all) cross([...vis.slugs.map((s) => ({ app_slug: s })), { actor_user_id: vis.userId, category: "auth" }]);
  const seen = new Set<string>();
  return sets.filter((s) => {
    const k = JSON.stringify(s);
    return !seen.has(k) && seen.add(k);
  });
}

function whereOf(eq: Eq, params: (string | number)[]): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(eq)) {
    parts.push(`${k} = ?`);
    params.push(v as string | number);
  }
  parts.push("id < ?");
  return parts.join(" AND ");
}

/** Fallback for very many branches: one walk down the primary key with IN filters. */
function scanSql(f: ListFilter, vis: Visibility, params: (string | number)[]): string {
  const conds: string[] = [];
  if (f.app) {
    conds.push("app_slug = ?");
    params.push(f.app);
  }
  if (f.categories?.length) {
    conds.push(`category IN (${f.categories.map(() => "?").join(",")})`);
    params.push(...f.categories);
  }
  if (!vis.all) {
    conds.push(`(app_slug IN (${vis.slugs.map(() => "?").join(",") || "NULL"}) OR (actor_user_id = ? AND category = 'auth'))`);
    params.push(...vis.slugs, vis.userId);
  }
  conds.push("id < ?");
  return `SELECT ${LIST_COLS} FROM activity WHERE ${conds.join(" AND ")} ORDER BY id DESC LIMIT ?`;
}

/** The activity repository. */
export function createActivityRepo(sqlite: Database) {
  const insert = sqlite.prepare(
    `INSERT INTO activity (app_slug, app_id, actor_user_id, actor_name, actor_source, ip, category, action, target, summary,
      error, compose_version_id, sync_status, before_json, after_json, created_at)
     VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`,
  );

  return {
    insert(v: {
      appSlug: string | null;
      appId: number | null;
      actorUserId: number | null;
      actorName: string;
      actorSource: string;
      ip: string | null;
      category: string;
      action: string;
      target: string | null;
      summary: string;
      error: string | null;
      composeVersionId: number | null;
      syncStatus: string | null;
      beforeJson: string | null;
      afterJson: string | null;
      createdAt: string;
    }): number {
      const row = insert.get(
        v.appSlug,
        v.appId,
        v.actorUserId,
        v.actorName,
        v.actorSource,
        v.ip,
        v.category,
        v.action,
        v.target,
        v.summary,
        v.error,
        v.composeVersionId,
        v.syncStatus,
        v.beforeJson,
        v.afterJson,
        v.createdAt,
      ) as { id: number };
      return row.id;
    },

    /** One page, newest first; `limit + 1` rows are read so the caller knows whether more follow. */
    list(f: ListFilter, vis: Visibility): ActivityRow[] {
      const before = f.before ?? NO_CURSOR;
      const n = f.limit + 1;
      const bs = branches(f, vis);
      if (bs.length === 0) return [];
      const params: (string | number)[] = [];
      let sql: string;
      if (bs.length === 1) {
        sql = `SELECT ${LIST_COLS} FROM activity WHERE ${whereOf(bs[0], params)} ORDER BY id DESC LIMIT ?`;
        params.push(before, n);
      } else if (bs.length <= MAX_BRANCHES) {
        // merge on ids only: each arm is a covering-index walk already in id order, the UNION merge is lazy and
        // stops after n ids, and only those n rows are read from the table
        const arms = bs.map((b) => {
          const w = whereOf(b, params);
          params.push(before);
          return `SELECT id FROM activity WHERE ${w}`;
        });
        sql = `SELECT ${LIST_COLS} FROM activity WHERE id IN (${arms.join(" UNION ")} ORDER BY id DESC LIMIT ?) ORDER BY id DESC`;
        params.push(n);
      } else {
        sql = scanSql(f, vis, params);
        params.push(before, n);
      }
      return sqlite.query<ActivityRow, (string | number)[]>(sql).all(...params);
    },

    get(id: number): ActivityDetailRow | null {
      return sqlite
        .query<ActivityDetailRow, [number]>(
          `SELECT ${LIST_COLS}, before_json, after_json, actor_user_id FROM activity WHERE id = ?`,
        )
        .get(id);
    },

    count(): number {
      return sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM activity").get()!.n;
    },

    deleteAll(): void {
      sqlite.run("DELETE FROM activity");
    },

    /** Delete up to `batch` entries older than `cutoff`; returns how many went. */
    deleteOlderThan(cutoff: string, batch: number): number {
      return sqlite.run(
        "DELETE FROM activity WHERE id IN (SELECT id FROM activity WHERE created_at < ? ORDER BY created_at LIMIT ?)",
        [cutoff, batch],
      ).changes;
    },
  };
}

export type ActivityRepo = ReturnType<typeof createActivityRepo>;
