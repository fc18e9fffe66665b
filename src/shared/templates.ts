/**
 * Templates on the wire (GET /api/templates, GET /api/templates/{id}, POST /api/templates/{id}/render and
 * /api/templates/{id}/deploy).
 */
import type { BackupStrategy } from "./backups";
import type { Accepted } from "./deploys";

export const VARIABLE_TYPES = ["text", "secret", "domain", "email", "number"] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

export const SECRET_CHARSETS = ["hex", "alphanum", "base58"] as const;
export type SecretCharset = (typeof SECRET_CHARSETS)[number];

export interface TemplateVariable {
  key: string;
  label: string;
  type: VariableType;
  required: boolean;
  default: string | null;
  help: string | null;
  /** How a secret left empty is made (server-side, crypto.getRandomValues). */
  generate?: { length: number; charset: SecretCharset };
}

/** One entry of GET /api/templates. */
export interface TemplateSummary {
  id: string;
  name: string;
  description: string;
  category: string;
  tags: string[];
  /** Services of its compose file. */
  services: string[];
  variables: TemplateVariable[];
  /** Raised when the template changes; an app remembers the one it was made from. */
  version: number;
  /** An SVG image, inline. */
  icon: string;
  /** The service and port a route reaches (quick test and domain routing), null when it serves no web page. */
  web: { service: string; port: number } | null;
  /** The data worth a daily backup (the service and the strategy that reads it), null when there is none. */
  database: { service: string; strategy: BackupStrategy } | null;
}

/** GET /api/templates/{id}. */
export interface TemplateDetail extends TemplateSummary {
  compose: string;
  notes: string;
}

export const ROUTING_MODES = ["quick", "domain", "none"] as const;
export type RoutingMode = (typeof ROUTING_MODES)[number];

/**
 * What a deploy from a template may make besides the app: `backup` a daily backup config of the template's database
 * (only a template with `database`), `alert` an `app_down` alert rule of the app (any template).
 */
export interface TemplateBatteries {
  backup?: boolean;
  alert?: boolean;
}

/** POST /api/templates/{id}/render: what a deploy of this body would use. */
export interface TemplateRenderBody {
  slug: string;
  variables?: Record<string, string>;
  routing?: { mode: RoutingMode; domain?: string; tls?: string };
  batteries?: TemplateBatteries;
}

/**
 * POST /api/templates/{id}/deploy: the render's body, and optionally the reviewed texts: `compose` and `env` (the
 * .env text), when given, are deployed instead of the rendered ones (still checked as every deploy is).
 */
export interface TemplateDeployBody extends TemplateRenderBody {
  compose?: string;
  env?: string;
}

/** When a battery's daily backup runs: 03:00 in the server's time zone. */
export const BACKUP_SCHEDULE = "0 3 * * *";
/** Archives a battery's backup config keeps. */
export const BACKUP_KEEP = 7;
/** How long an app has no running container before its battery alert fires (the dashboard's "App down for 5 min"). */
export const ALERT_DURATION = "5m";

/** The daily backup config a deploy makes (the config's own fields, as POST /api/apps/{slug}/backups/configs takes them). */
export interface BackupBattery {
  strategy: BackupStrategy;
  service: string;
  target: { kind: "local" };
  schedule: string;
  retention_count: number;
}

/** The alert rule a deploy makes (the rule's own fields, as POST /api/alerts/rules takes them). */
export interface AlertBattery {
  name: string;
  app_slug: string;
  kind: "app_down";
  threshold: number;
  duration: string;
  /** Empty: the rule fires into the alert history and the dashboard; destinations are added to it afterwards. */
  webhook_ids: number[];
}

/** The batteries a deploy of the body would make (present on a render when the body asked for any). */
export interface TemplateBatteryPlan {
  backup?: BackupBattery;
  alert?: AlertBattery;
}

/** 200 of POST /api/templates/{id}/render: the exact compose text (routing labels included) and .env text. */
export interface TemplateRender {
  compose: string;
  env: string;
  batteries?: TemplateBatteryPlan;
}

/**
 * What a deploy made besides the app: the ids of the configs, and `failed` (one line each) for a battery that could
 * not be made once the deploy was accepted (the deploy stands; make it on the Backups or Alerts page).
 */
export interface TemplateBatteriesMade {
  backup_config_id?: number;
  alert_rule_id?: number;
  failed?: string[];
}

/** 202 of POST /api/templates/{id}/deploy; `batteries` present when the body asked for any. */
export interface TemplateDeployAccepted extends Accepted {
  batteries?: TemplateBatteriesMade;
}
