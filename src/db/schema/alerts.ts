/** Alert webhook destinations with their delivery log, alert rules, their per-subject state, and the alert history. */
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const webhooks = sqliteTable("webhooks", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull(),
  url: text("url").notNull(),
  /** generic, slack or discord. */
  kind: text("kind").notNull(),
  /** The signing secret sealed with the master key; null when none is set. */
  secretEnc: text("secret_enc"),
  enabled: integer("enabled", { mode: "boolean" }).notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** One row per delivery attempt sequence to a destination (the last attempt's outcome). */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    webhookId: integer("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    /** alert.firing, alert.resolved, test. */
    event: text("event").notNull(),
    /** HTTP status of the receiver; null when none answered. */
    status: integer("status"),
    durationMs: integer("duration_ms").notNull(),
    attempts: integer("attempts").notNull(),
    error: text("error"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("webhook_deliveries_webhook").on(t.webhookId)],
);

export const alertRules = sqliteTable(
  "alert_rules",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    /** Null for a global rule (every app, or the host for host kinds). */
    appSlug: text("app_slug"),
    /** cpu, memory, disk, app_down, backup_failed, http_5xx, cert_expiry. */
    kind: text("kind").notNull(),
    threshold: real("threshold").notNull(),
    /** How long the condition must hold before firing, e.g. 5m; 0s fires at once. */
    duration: text("duration").notNull(),
    /** JSON array of webhook ids notified on each transition. */
    webhookIds: text("webhook_ids").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    /** Re-notify while firing every this long (e.g. 1h); null: once per transition. */
    repeatInterval: text("repeat_interval"),
    /** ISO time until which notifications are held back; null: not silenced. */
    silencedUntil: text("silenced_until"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("alert_rules_app").on(t.appSlug)],
);

/** Evaluator state per rule and subject (an app, a container, the host, a certificate), kept across restarts. */
export const alertState = sqliteTable(
  "alert_state",
  {
    ruleId: integer("rule_id")
      .notNull()
      .references(() => alertRules.id, { onDelete: "cascade" }),
    subject: text("subject").notNull(),
    /** ok, pending (condition holding, duration not yet reached) or firing. */
    state: text("state").notNull(),
    /** When the current state began (ISO). */
    since: text("since").notNull(),
    value: real("value"),
    lastNotifiedAt: text("last_notified_at"),
  },
  (t) => [primaryKey({ columns: [t.ruleId, t.subject] })],
);

/** Alert transitions (firing, resolved) and other recorded alerts such as git sync conflicts; kept after rule removal. */
export const alertHistory = sqliteTable(
  "alert_history",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    ruleId: integer("rule_id"),
    appSlug: text("app_slug"),
    kind: text("kind").notNull(),
    subject: text("subject"),
    /** firing or resolved. */
    state: text("state").notNull(),
    value: real("value"),
    message: text("message").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("alert_history_app").on(t.appSlug), index("alert_history_rule").on(t.ruleId)],
);
