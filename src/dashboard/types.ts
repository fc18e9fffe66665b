/** Wire shapes of the API as the dashboard reads them (snake_case, as sent). */

import type { ActivityRow } from "../modules/activity/repo";
import type { Role } from "../modules/auth/roles";

export { CATEGORIES, type Category } from "../modules/activity/categories";
export { ROLES, type Role } from "../modules/auth/roles";

/** Human names of the roles. */
export const ROLE_LABELS: Record<Role, string> = {
  super_admin: "Super admin",
  admin: "Admin",
  manage: "Manage",
  viewer: "Viewer",
};

/** GET /api/me */
export interface Me {
  id: number;
  username: string;
  role: Role;
  app_access: string[];
}

/** GET /api/system/info */
export interface SystemInfo {
  version: string;
  commit: string;
  tls_mode: TlsMode;
  domain: string | null;
}

/** An entry of GET /api/users */
export interface User {
  id: number;
  username: string;
  role: Role;
  created_at: string;
  updated_at: string;
  app_access: string[];
}

/** An entry of GET /api/apikeys */
export interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  username?: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

/** POST /api/apikeys: the only time the key itself is sent. */
export interface CreatedApiKey {
  id: number;
  name: string;
  key: string;
  created_at: string;
  expires_at: string | null;
}

/** One activity entry as the list routes return it (the server's row type). */
export type ActivityEntry = ActivityRow;

/** GET /api/activity/{id} */
export interface ActivityDetail extends ActivityEntry {
  before_json: unknown;
  after_json: unknown;
}

/** The cursor-paginated list envelope. */
export interface ActivityPage {
  entries: ActivityEntry[];
  next_before: number | null;
}

/** Filters of the activity list. */
export interface ActivityFilter {
  categories?: string[];
  app?: string;
  limit?: number;
  before?: number | null;
}

/** Status of an app as the server derives it from the engine. */
export type AppStatus = "running" | "degraded" | "stopped" | "failed" | "deploying" | "removed" | "unknown";

/** One container of a service. */
export interface AppContainer {
  id: string;
  name: string;
  number: number;
  state: string;
  status: string;
  health: string | null;
}

/** One compose service of an app. */
export interface AppService {
  name: string;
  image: string;
  replicas: number;
  ports: string[];
  scalable: { ok: boolean; reason?: string };
  containers: AppContainer[];
}

/** TLS modes of the server and of endpoints. */
export type TlsMode = "auto" | "custom" | "local" | "off";

/** A routed endpoint (from the sundeck.* labels); `tls` null means the server's mode. */
export interface AppEndpoint {
  service: string;
  hosts: string[];
  port: number;
  path: string;
  tls: TlsMode | null;
}

/** An entry of GET /api/apps/{slug}/certs: one per host of the app. */
export interface CertInfo {
  domain: string;
  mode: TlsMode | null;
  status: "issued" | "pending" | "failed" | "none";
  source: "acme" | "custom" | "local" | "fallback" | null;
  not_before?: string | null;
  not_after: string | null;
  issuer: string | null;
  subject?: string | null;
  sans?: string[] | null;
  fingerprint?: string | null;
  error: string | null;
  next_attempt_at: string | null;
}

/** 200 of PUT /api/apps/{slug}/certs/{domain}: what was stored. */
export interface UploadedCert {
  domain: string;
  not_before: string;
  not_after: string;
  issuer: string;
  subject: string;
  sans: string[];
  fingerprint: string;
}

/** One bucket of GET /api/apps/{slug}/request-stats (buckets without requests are left out). */
export interface StatsPoint {
  t: string;
  requests: number;
  rps: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  /** 5xx answers in the bucket. */
  errors: number;
}

/** GET /api/apps/{slug}/request-stats?range= */
export interface RequestStats {
  range: string;
  /** The metrics tier answering (its name, e.g. "raw", "1m"). */
  tier: string;
  /** Width of each bucket of `series`, in ms (the tier's resolution). */
  step_ms?: number;
  from: string;
  to: string;
  requests: number;
  rps: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  bytes: number;
  status_codes: Record<string, number>;
  status_classes: Record<string, number>;
  top_paths: Array<{ path: string; count: number }>;
  series: StatsPoint[];
}

/** A deploy or lifecycle action: GET /api/apps/{slug}/deploys[/{id}] */
export interface DeployRecord {
  id: number;
  action: string;
  status: "running" | "succeeded" | "failed" | "cancelled" | "interrupted";
  error: string | null;
  version_id: number | null;
  source: string;
  started_at: string;
  finished_at: string | null;
}

/** GET /api/apps/{slug} (and each entry of GET /api/apps) */
export interface AppView {
  slug: string;
  status: AppStatus;
  stopped: boolean;
  services: AppService[];
  endpoints: AppEndpoint[];
  current_version: { id: number; version: number } | null;
  last_deploy: (Omit<DeployRecord, "source" | "version_id"> & { version_id?: number | null }) | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** An entry of GET /api/apps/{slug}/versions */
export interface AppVersion {
  id: number;
  version: number;
  hash: string;
  source: string;
  created_by: string | null;
  status: "good" | "failed" | null;
  current: boolean;
  created_at: string;
}

/** GET /api/apps/{slug}/versions/{id}: env values are null for viewers. */
export interface AppVersionDetail extends AppVersion {
  compose: string;
  env: Record<string, string | null>;
}

/** GET /api/apps/{slug}/compose */
export interface AppCompose {
  slug: string;
  compose: string;
  hash: string;
  current_version_id: number | null;
}

/** 202 of a deploy or an action. */
export interface Accepted {
  slug: string;
  deploy_id: number | null;
}

/** A frame of /api/apps/{slug}/deploy-logs. */
export interface DeployFrame {
  timestamp: string;
  action: "pull" | "up" | "down" | "restart" | "scale" | "none";
  output: string;
  done: boolean;
}

/** A frame of /api/apps/{slug}/logs: a line, or the single error frame. */
export interface ContainerLogFrame {
  ts?: string;
  stream?: "stdout" | "stderr";
  line?: string;
  error?: string;
}
