/**
 * The dashboard's vocabulary: the API's wire shapes (declared once in src/shared/, imported as types so nothing of
 * the server reaches the bundle), the shared constants, and the few shapes only the dashboard has.
 */
import type { AlertRule } from "../shared/alerts";
import type { Role } from "../shared/roles";
import type { WebhookDestination } from "../shared/webhooks";

export { CATEGORIES, type Category } from "../shared/activity";
export type { AlertHistoryEntry, AlertHistoryPage, AlertKind, AlertRule } from "../shared/alerts";
export { ALERT_KINDS } from "../shared/alerts";
export type { ApiKey, CreatedApiKey } from "../shared/apikeys";
export type { AppCompose, AppContainer, AppEndpoint, AppService, AppStatus, AppView, ContainerLogFrame } from "../shared/apps";
export type { Me, SetupStatus, SignedIn } from "../shared/auth";
export type { BackupConfig, BackupRestore, BackupRun, BackupStrategy, BackupTarget, DetectedStrategy } from "../shared/backups";
export { BACKUP_STRATEGIES } from "../shared/backups";
export type { CertInfo, UploadedCert } from "../shared/certs";
export type { Accepted, AppVersion, AppVersionDetail, DeployFrame, DeployRecord } from "../shared/deploys";
export type { AppMetrics, ContainerPoint, RequestStats, StatsPoint, SystemMetrics, SystemPoint } from "../shared/metrics";
export { ROLES, type Role } from "../shared/roles";
export type { ActivityDetail, ActivityEntry, ActivityPage, AuditConfig } from "../shared/schemas/activity";
export type { PublicHost, SystemInfo } from "../shared/system";
export type { TlsMode } from "../shared/tls";
export type { NewUser, User } from "../shared/users";
export type {
  WebhookDelivery,
  WebhookDestination,
  WebhookKind,
  WebhookTestRequest,
  WebhookTestResult,
} from "../shared/webhooks";
export { SECRET_MASK, WEBHOOK_KINDS } from "../shared/webhooks";

/** Human names of the roles. */
export const ROLE_LABELS: Record<Role, string> = {
  super_admin: "Super admin",
  admin: "Admin",
  manage: "Manage",
  viewer: "Viewer",
};

/** Filters of the activity list. */
export interface ActivityFilter {
  categories?: string[];
  app?: string;
  limit?: number;
  before?: number | null;
}

/** The body of POST/PUT /api/alerts/rules (the server fills id, firing and the times). */
export type AlertRuleInput = Pick<
  AlertRule,
  "name" | "app_slug" | "kind" | "threshold" | "duration" | "webhook_ids" | "enabled" | "repeat_interval" | "silenced_until"
>;

/** The body of POST/PUT /api/webhooks; `secret` omitted or the mask keeps the stored one. */
export type WebhookInput = Omit<WebhookDestination, "id" | "secret"> & { secret?: string };

/** Filters of the alert history. */
export interface AlertHistoryFilter {
  app?: string;
  state?: "firing" | "resolved";
  limit?: number;
  before?: number | null;
}
