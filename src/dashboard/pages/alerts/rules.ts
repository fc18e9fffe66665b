/**
 * Pure parts of the Alerts page: what each kind means in words, the spec's five example rules, the silence choices,
 * and the form's draft turned into the API's body.
 */
import type { AlertKind, AlertRule, AlertRuleInput } from "../../types";

/**
 * Per kind: its name in the kind picker, the start of its condition in words, the threshold's label and unit (null:
 * unused), whether a duration applies, and whether it watches the host rather than apps.
 */
export const KIND_INFO: Record<
  AlertKind,
  { name: string; label: string; threshold: string | null; unit: string; duration: boolean; host?: boolean }
> = {
  cpu: {
    name: "CPU use",
    label: "CPU above",
    threshold: "CPU above (% of one core, or of the limit)",
    unit: "%",
    duration: true,
  },
  memory: {
    name: "Memory use",
    label: "Memory above",
    threshold: "Memory above (% of the limit, or of the host)",
    unit: "%",
    duration: true,
  },
  disk: {
    name: "Host disk space",
    label: "Host disk free under",
    threshold: "Free space under (%)",
    unit: "%",
    duration: true,
    host: true,
  },
  app_down: { name: "App down", label: "App down", threshold: null, unit: "", duration: true },
  backup_failed: { name: "Backup failed", label: "Backup failed", threshold: null, unit: "", duration: false },
  http_5xx: {
    name: "5xx responses",
    label: "5xx responses above",
    threshold: "5xx responses above (% of requests)",
    unit: "%",
    duration: true,
  },
  cert_expiry: {
    name: "Certificate expiry",
    label: "Certificate expiring within",
    threshold: "Days before expiry",
    unit: " days",
    duration: false,
  },
};

/** The condition of a rule in words: "CPU above 80% for 5m", "Backup failed". */
export function conditionWords(r: Pick<AlertRule, "kind" | "threshold" | "duration">): string {
  const k = KIND_INFO[r.kind] ?? { name: r.kind, label: r.kind, threshold: "", unit: "", duration: true };
  const parts = [k.label];
  if (k.threshold !== null) parts.push(`${r.threshold}${k.unit}`);
  if (k.duration && r.duration && !/^0+[a-z]*$/.test(r.duration)) parts.push(`for ${r.duration}`);
  return parts.join(" ");
}

/** A one-click example: the spec's five (SPEC "Alert notifications"). */
export interface ExampleRule {
  id: string;
  /** The button's text. */
  button: string;
  rule: Pick<AlertRuleInput, "name" | "kind" | "threshold" | "duration">;
}

export const EXAMPLE_RULES: ExampleRule[] = [
  { id: "cpu", button: "CPU above 80% for 5 min", rule: { name: "CPU above 80%", kind: "cpu", threshold: 80, duration: "5m" } },
  {
    id: "memory",
    button: "Memory above 85% of limit for 5 min",
    rule: { name: "Memory above 85% of limit", kind: "memory", threshold: 85, duration: "5m" },
  },
  {
    id: "disk",
    button: "Host disk under 15% free",
    rule: { name: "Host disk under 15% free", kind: "disk", threshold: 15, duration: "0s" },
  },
  { id: "down", button: "App down for 5 min", rule: { name: "App down", kind: "app_down", threshold: 0, duration: "5m" } },
  {
    id: "backup",
    button: "Backup failed (immediate)",
    rule: { name: "Backup failed", kind: "backup_failed", threshold: 0, duration: "0s" },
  },
];

/** The body creating an example for `app` (null: every app); the host disk rule is always global. */
export function exampleBody(e: ExampleRule, app: string | null, webhookIds: number[]): Partial<AlertRuleInput> {
  const host = KIND_INFO[e.rule.kind].host === true;
  const appSlug = host ? null : app;
  return {
    ...e.rule,
    name: appSlug ? `${e.rule.name} (${appSlug})` : e.rule.name,
    app_slug: appSlug,
    webhook_ids: webhookIds,
    enabled: true,
  };
}

/** "Until lifted" is stored as this far-off time: the API knows only "until". */
export const FOREVER = "9999-12-31T23:59:59.000Z";

/** The silence choices and the time each one ends, from `now`. */
export const SILENCE_CHOICES = [
  { id: "1h", label: "1 hour", until: (now: number) => new Date(now + 3_600_000).toISOString() },
  { id: "24h", label: "24 hours", until: (now: number) => new Date(now + 86_400_000).toISOString() },
  { id: "forever", label: "Until lifted", until: () => FOREVER },
] as const;

/** Whether the rule is silenced at `now`. */
export function isSilenced(r: Pick<AlertRule, "silenced_until">, now = Date.now()): boolean {
  return r.silenced_until !== null && Date.parse(r.silenced_until) > now;
}

/** The form's fields as typed. */
export interface RuleDraft {
  name: string;
  /** "" for every app. */
  app: string;
  kind: AlertKind;
  threshold: string;
  duration: string;
  repeat: string;
  webhookIds: number[];
  enabled: boolean;
}

/** A rule's draft (or a new one's). */
export function draftOf(r?: AlertRule): RuleDraft {
  if (!r) {
    return { name: "", app: "", kind: "cpu", threshold: "80", duration: "5m", repeat: "", webhookIds: [], enabled: true };
  }
  return {
    name: r.name,
    app: r.app_slug ?? "",
    kind: r.kind,
    threshold: String(r.threshold),
    duration: r.duration,
    repeat: r.repeat_interval ?? "",
    webhookIds: [...r.webhook_ids],
    enabled: r.enabled,
  };
}

/**
 * The API body of a draft, or why it cannot be sent. Only what the browser can be sure of is decided here (unused
 * thresholds are 0, an immediate kind has 0s, a number is a number); whether the values are acceptable for the kind
 * is the server's 400 to give, shown as it says it.
 */
export function bodyOf(d: RuleDraft): { body: Partial<AlertRuleInput> } | { error: string } {
  const k = KIND_INFO[d.kind];
  const threshold = k.threshold === null ? 0 : Number(d.threshold.trim() || Number.NaN);
  if (!Number.isFinite(threshold)) return { error: "threshold must be a number" };
  return {
    body: {
      name: d.name.trim(),
      app_slug: k.host || d.app === "" ? null : d.app,
      kind: d.kind,
      threshold,
      duration: k.duration ? d.duration.trim() || "0s" : "0s",
      repeat_interval: d.repeat.trim() || null,
      webhook_ids: d.webhookIds,
      enabled: d.enabled,
    },
  };
}
