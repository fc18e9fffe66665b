/**
 * Data access for alerts: rules, the evaluator's state per rule and subject, and the history of transitions.
 * No rules of who may see what here; callers pass the app scope they computed.
 */
import type { Db } from "../../db";

/** A rule as stored (snake_case columns, webhook ids as JSON text). */
export interface RuleRow {
  id: number;
  name: string;
  app_slug: string | null;
  kind: string;
  threshold: number;
  duration: string;
  webhook_ids: string;
  enabled: number;
  repeat_interval: string | null;
  silenced_until: string | null;
  created_at: string;
  updated_at: string;
}

/** The stored fields of a rule other than id and times. */
export interface RuleFields {
  name: string;
  app_slug: string | null;
  kind: string;
  threshold: number;
  duration: string;
  webhook_ids: number[];
  enabled: boolean;
  repeat_interval: string | null;
  silenced_until: string | null;
}

/** One subject's evaluator state. */
export interface StateRow {
  rule_id: number;
  subject: string;
  state: "pending" | "firing";
  since: string;
  value: number | null;
  last_notified_at: string | null;
}

export interface HistoryRow {
  id: number;
  rule_id: number | null;
  app_slug: string | null;
  kind: string;
  subject: string | null;
  state: "firing" | "resolved";
  value: number | null;
  message: string;
  created_at: string;
}

/** History filters; `slugs` null means every entry (admins), else only entries of those apps. */
export interface HistoryFilter {
  app?: string;
  rule?: number;
  state?: "firing" | "resolved";
  before?: number;
  limit: number;
  slugs: string[] | null;
}

/** Build the repository. */
export function createAlertRepo(db: Db) {
  const s = db.sqlite;
  const byId = s.prepare("SELECT * FROM alert_rules WHERE id = ?");
  const all = s.prepare("SELECT * FROM alert_rules ORDER BY id");
  const insert = s.prepare(
    `INSERT INTO alert_rules (name, app_slug, kind, threshold, duration, webhook_ids, enabled, repeat_interval,
      silenced_until, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
  );
  const update = s.prepare(
    `UPDATE alert_rules SET name = ?, app_slug = ?, kind = ?, threshold = ?, duration = ?, webhook_ids = ?, enabled = ?,
      repeat_interval = ?, silenced_until = ?, updated_at = ? WHERE id = ? RETURNING *`,
  );
  const states = s.prepare("SELECT * FROM alert_state WHERE rule_id = ? ORDER BY subject");
  const upsertState = s.prepare(
    `INSERT INTO alert_state (rule_id, subject, state, since, value, last_notified_at) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (rule_id, subject) DO UPDATE SET state = excluded.state, since = excluded.since, value = excluded.value,
      last_notified_at = excluded.last_notified_at`,
  );
  const insertHistory = s.prepare(
    `INSERT INTO alert_history (rule_id, app_slug, kind, subject, state, value, message, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  );
  const values = (f: RuleFields) =>
    [
      f.name,
      f.app_slug,
      f.kind,
      f.threshold,
      f.duration,
      JSON.stringify(f.webhook_ids),
      f.enabled ? 1 : 0,
      f.repeat_interval,
      f.silenced_until,
    ] as const;

  return {
    rule: (id: number) => (byId.get(id) as RuleRow | null) ?? undefined,
    rules: () => all.all() as RuleRow[],
    insertRule: (f: RuleFields, now: string) => insert.get(...values(f), now, now) as RuleRow,
    updateRule: (id: number, f: RuleFields, now: string) => update.get(...values(f), now, id) as RuleRow,
    deleteRule: (id: number) => s.run("DELETE FROM alert_rules WHERE id = ?", [id]).changes > 0,
    /** Rules of an app, or global ones for null. */
    countRules: (app: string | null) =>
      (s.query("SELECT COUNT(*) AS n FROM alert_rules WHERE app_slug IS ?").get(app) as { n: number }).n,

    /** Ids among `ids` that name no webhook destination. */
    missingWebhooks(ids: number[]): number[] {
      if (ids.length === 0) return [];
      const found = new Set(
        (
          s.prepare(`SELECT id FROM webhooks WHERE id IN (${ids.map(() => "?").join(",")})`).all(...ids) as Array<{ id: number }>
        ).map((r) => r.id),
      );
      return ids.filter((id) => !found.has(id));
    },

    states: (ruleId: number) => states.all(ruleId) as StateRow[],
    putState: (r: StateRow) => upsertState.run(r.rule_id, r.subject, r.state, r.since, r.value, r.last_notified_at),
    dropState: (ruleId: number, subject: string) =>
      s.run("DELETE FROM alert_state WHERE rule_id = ? AND subject = ?", [ruleId, subject]),
    dropStates: (ruleId: number) => s.run("DELETE FROM alert_state WHERE rule_id = ?", [ruleId]),

    addHistory: (h: Omit<HistoryRow, "id">) =>
      (
        insertHistory.get(h.rule_id, h.app_slug, h.kind, h.subject, h.state, h.value, h.message, h.created_at) as {
          id: number;
        }
      ).id,

    /** One page of history, newest first; `limit + 1` rows so the caller knows whether more follow. */
    history(f: HistoryFilter): HistoryRow[] {
      const where: string[] = [];
      const params: Array<string | number> = [];
      if (f.slugs !== null) {
        if (f.slugs.length === 0) return [];
        where.push(`app_slug IN (${f.slugs.map(() => "?").join(",")})`);
        params.push(...f.slugs);
      }
      if (f.app !== undefined) {
        where.push("app_slug = ?");
        params.push(f.app);
      }
      if (f.rule !== undefined) {
        where.push("rule_id = ?");
        params.push(f.rule);
      }
      if (f.state !== undefined) {
        where.push("state = ?");
        params.push(f.state);
      }
      if (f.before !== undefined) {
        where.push("id < ?");
        params.push(f.before);
      }
      const sql = `SELECT * FROM alert_history ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
      return s.prepare(sql).all(...params, f.limit + 1) as HistoryRow[];
    },
  };
}

export type AlertRepo = ReturnType<typeof createAlertRepo>;
