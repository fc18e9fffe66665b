/** Wire shapes of alert rules, the alert history and the notification payload (snake_case, as sent). */

/**
 * cpu: percent of one core, or of the limit when set; memory: percent of the limit, or of host memory; disk: percent
 * free under which it fires; app_down: no running container or no metrics (threshold unused); backup_failed: the
 * last run failed (immediate); http_5xx: percent of requests; cert_expiry: days before the certificate expires.
 */
export const ALERT_KINDS = ["cpu", "memory", "disk", "app_down", "backup_failed", "http_5xx", "cert_expiry"] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** A rule as sent and returned by /api/alerts/rules. */
export interface AlertRule {
  id: number;
  name: string;
  /** null: a global rule (every app, or the host for `disk`). */
  app_slug: string | null;
  kind: AlertKind;
  threshold: number;
  /** How long the condition holds before the rule fires, e.g. `5m`; `0s` fires at once. */
  duration: string;
  webhook_ids: number[];
  enabled: boolean;
  /** Notify again while firing every this long (e.g. `1h`); null: once per transition. */
  repeat_interval: string | null;
  /** RFC 3339 time until which notifications are held back; null: not silenced. */
  silenced_until: string | null;
  /** Subjects (apps, containers, the host, certificates) firing now. */
  firing: Array<{ subject: string; since: string; value: number | null }>;
  created_at: string;
  updated_at: string;
}

/** An entry of GET /api/alerts/history. */
export interface AlertHistoryEntry {
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

/** GET /api/alerts/history?app=&limit=&before= */
export interface AlertHistoryPage {
  entries: AlertHistoryEntry[];
  /** Pass as `before` for the next page; null at the end. */
  next_before: number | null;
}

/** The generic webhook payload (the JSON body); slack and discord get their own documented formats built from it. */
export interface AlertNotification {
  /** alert.firing, alert.resolved or test. */
  event: string;
  rule: { id: number; name: string; kind: string; threshold: number; duration: string } | null;
  app_slug: string | null;
  state: "firing" | "resolved" | "test";
  value: number | null;
  message: string;
  created_at: string;
}
