/**
 * The dashboard's vocabulary: the API's wire shapes (declared once in src/shared/, imported as types so nothing of
 * the server reaches the bundle), the shared constants, and the few shapes only the dashboard has.
 */
import type { Role } from "../shared/roles";

export { CATEGORIES, type Category } from "../shared/activity";
export type { ApiKey, CreatedApiKey } from "../shared/apikeys";
export type { AppCompose, AppContainer, AppEndpoint, AppService, AppStatus, AppView, ContainerLogFrame } from "../shared/apps";
export type { Me, SetupStatus, SignedIn } from "../shared/auth";
export type { CertInfo, UploadedCert } from "../shared/certs";
export type { Accepted, AppVersion, AppVersionDetail, DeployFrame, DeployRecord } from "../shared/deploys";
export type { RequestStats, StatsPoint } from "../shared/metrics";
export { ROLES, type Role } from "../shared/roles";
export type { ActivityDetail, ActivityEntry, ActivityPage, AuditConfig } from "../shared/schemas/activity";
export type { PublicHost, SystemInfo } from "../shared/system";
export type { TlsMode } from "../shared/tls";
export type { NewUser, User } from "../shared/users";

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
