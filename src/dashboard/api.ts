/**
 * The dashboard's HTTP client: JSON in and out, the server's one-line text errors surfaced as they are, and a
 * signal when the session is gone so the app can show the login form.
 */

import type { EndpointEdit } from "../shared/apps";
import type { BackupConfigInput } from "./backups";
import type {
  Accepted,
  ActivityDetail,
  ActivityFilter,
  ActivityPage,
  AlertHistoryFilter,
  AlertHistoryPage,
  AlertRule,
  AlertRuleInput,
  ApiKey,
  AppCompose,
  AppMetrics,
  AppVersion,
  AppVersionDetail,
  AppView,
  AuditConfig,
  BackupConfig,
  BackupRestore,
  BackupRun,
  CertInfo,
  CreatedApiKey,
  DeployRecord,
  DetectedStrategy,
  Me,
  NewUser,
  PublicHost,
  RequestStats,
  Role,
  SetupStatus,
  SignedIn,
  SystemInfo,
  SystemMetrics,
  UploadedCert,
  User,
  WebhookDelivery,
  WebhookDestination,
  WebhookInput,
  WebhookTestRequest,
  WebhookTestResult,
} from "./types";

/** A failed API call; `message` is the server's text, safe to show. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const unauthorizedListeners = new Set<() => void>();

/** Routes whose 401 is about credentials in the body (a failed login), not a lost session. */
const CREDENTIAL_CHECKS = ["/api/auth/", "/api/setup"];

/** Call `fn` whenever an API call answers 401 (session expired or ended elsewhere). Returns the unsubscribe. */
export function onUnauthorized(fn: () => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

async function errorOf(res: Response): Promise<ApiError> {
  let text = (await res.text().catch(() => "")).trim().split("\n")[0] ?? "";
  if (!text || text.startsWith("<")) text = `${res.status} ${res.statusText || "Error"}`;
  const retry = res.headers.get("retry-after");
  if (res.status === 429 && retry) text += ` (try again in ${retry} s)`;
  return new ApiError(res.status, text);
}

/** One API call. Resolves with the parsed JSON (undefined for 204); rejects with ApiError. */
export async function request<T>(method: string, path: string, body?: unknown, opts: { signal?: AbortSignal } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers:
        body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      signal: opts.signal,
    });
  } catch (e) {
    if ((e as Error).name === "AbortError") throw e;
    throw new ApiError(0, "Cannot reach the server: check your connection");
  }
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401 && !CREDENTIAL_CHECKS.some((p) => path.startsWith(p))) {
      for (const fn of unauthorizedListeners) fn();
    }
    throw err;
  }
  if (res.status === 204) return undefined as T;
  const type = res.headers.get("content-type") ?? "";
  return (type.includes("json") ? await res.json() : await res.text()) as T;
}

/** A multipart POST (uploads); resolves with the parsed JSON, rejects with ApiError like `request`. */
export async function upload<T>(path: string, form: FormData): Promise<T> {
  let res: Response;
  try {
    // no content-type: the browser sets multipart/form-data with its boundary
    res = await fetch(path, { method: "POST", headers: { accept: "application/json" }, body: form, credentials: "same-origin" });
  } catch {
    throw new ApiError(0, "Cannot reach the server: check your connection");
  }
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401) for (const fn of unauthorizedListeners) fn();
    throw err;
  }
  const type = res.headers.get("content-type") ?? "";
  return (type.includes("json") ? await res.json() : await res.text()) as T;
}

const enc = encodeURIComponent;

/** Query string of an activity filter. */
export function activityQuery(f: ActivityFilter): string {
  const q = new URLSearchParams();
  if (f.categories?.length) q.set("categories", f.categories.join(","));
  if (f.app) q.set("app", f.app);
  if (f.limit) q.set("limit", String(f.limit));
  if (f.before) q.set("before", String(f.before));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** Query string of an alert history filter. */
export function historyQuery(f: AlertHistoryFilter): string {
  const q = new URLSearchParams();
  if (f.app) q.set("app", f.app);
  if (f.state) q.set("state", f.state);
  if (f.limit) q.set("limit", String(f.limit));
  if (f.before) q.set("before", String(f.before));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The lifecycle actions of an app that answer 202 with a deploy id. */
export type LifecycleAction = "start" | "stop" | "restart" | "pull";

/** Query of the container logs stream. */
export interface LogsQuery {
  service: string;
  tail: number;
  follow: boolean;
  since?: string;
}

/** WebSocket paths of an app. */
export const appStreams = {
  deployLogs: (slug: string) => `/api/apps/${enc(slug)}/deploy-logs`,
  logs: (slug: string, q: LogsQuery) => {
    const p = new URLSearchParams({ service: q.service, tail: String(q.tail), follow: String(q.follow) });
    if (q.since) p.set("since", q.since);
    return `/api/apps/${enc(slug)}/logs?${p}`;
  },
};

/** Every route the dashboard calls. */
export const api = {
  setupStatus: () => request<SetupStatus>("GET", "/api/setup/status"),
  setup: (username: string, password: string) => request<User>("POST", "/api/setup", { username, password }),
  login: (username: string, password: string) => request<SignedIn>("POST", "/api/auth/login", { username, password }),
  logout: () => request<void>("POST", "/api/auth/logout"),
  me: () => request<Me>("GET", "/api/me"),
  changePassword: (current_password: string, new_password: string) =>
    request<void>("PUT", "/api/me/password", { current_password, new_password }),
  systemInfo: () => request<SystemInfo>("GET", "/api/system/info"),

  users: {
    list: () => request<User[]>("GET", "/api/users"),
    create: (username: string, password: string, role: Role) =>
      request<NewUser>("POST", "/api/users", { username, password, role }),
    update: (id: number, patch: { role?: Role; password?: string }) => request<User>("PUT", `/api/users/${id}`, patch),
    remove: (id: number) => request<void>("DELETE", `/api/users/${id}`),
    grant: (id: number, app_slug: string) => request<void>("POST", `/api/users/${id}/access`, { app_slug }),
    revoke: (id: number, slug: string) => request<void>("DELETE", `/api/users/${id}/access/${enc(slug)}`),
  },

  apiKeys: {
    list: () => request<ApiKey[]>("GET", "/api/apikeys"),
    create: (name: string, expires_at: string | null) => request<CreatedApiKey>("POST", "/api/apikeys", { name, expires_at }),
    revoke: (id: number) => request<void>("DELETE", `/api/apikeys/${id}`),
  },

  activity: {
    list: (f: ActivityFilter, signal?: AbortSignal) =>
      request<ActivityPage>("GET", `/api/activity${activityQuery(f)}`, undefined, { signal }),
    recent: () => request<ActivityPage>("GET", "/api/activity/recent"),
    get: (id: number) => request<ActivityDetail>("GET", `/api/activity/${id}`),
    purge: () => request<void>("DELETE", "/api/activity"),
  },

  settings: {
    auditConfig: () => request<AuditConfig>("GET", "/api/system/audit-config"),
    setAuditConfig: (retention_days: number) => request<AuditConfig>("PUT", "/api/system/audit-config", { retention_days }),
    publicHost: () => request<PublicHost>("GET", "/api/system/public-host"),
    setPublicHost: (public_host: string) => request<PublicHost>("PUT", "/api/system/public-host", { public_host }),
  },

  processLogs: () => request<string[]>("GET", "/api/system/process-logs"),

  apps: {
    list: () => request<AppView[]>("GET", "/api/apps"),
    get: (slug: string) => request<AppView>("GET", `/api/apps/${enc(slug)}`),
    /** Validated, written and deployed; an omitted `env` keeps the app's current .env. */
    deploy: (slug: string, compose: string, env?: Record<string, string>) =>
      request<Accepted>("POST", "/api/apps/deploy", env === undefined ? { slug, compose } : { slug, compose, env }),
    remove: (slug: string, volumes: boolean) =>
      request<Accepted>("DELETE", `/api/apps/${enc(slug)}${volumes ? "?volumes=true" : ""}`),
    action: (slug: string, action: LifecycleAction) => request<Accepted>("POST", `/api/apps/${enc(slug)}/${action}`),
    cancel: (slug: string) => request<unknown>("POST", `/api/apps/${enc(slug)}/cancel`),
    scale: (slug: string, services: Record<string, number>) =>
      request<Accepted>("POST", `/api/apps/${enc(slug)}/scale`, { services }),
    rollback: (slug: string, version_id: number) => request<Accepted>("POST", `/api/apps/${enc(slug)}/rollback`, { version_id }),
    deploys: (slug: string) => request<DeployRecord[]>("GET", `/api/apps/${enc(slug)}/deploys`),
    deployRecord: (slug: string, id: number) => request<DeployRecord>("GET", `/api/apps/${enc(slug)}/deploys/${id}`),
    versions: (slug: string) => request<AppVersion[]>("GET", `/api/apps/${enc(slug)}/versions`),
    version: (slug: string, id: number) => request<AppVersionDetail>("GET", `/api/apps/${enc(slug)}/versions/${id}`),
    compose: (slug: string) => request<AppCompose>("GET", `/api/apps/${enc(slug)}/compose`),
    env: (slug: string) => request<Record<string, string | null>>("GET", `/api/apps/${enc(slug)}/env`),
    /** Replaces the .env; the server starts a redeploy (its id is not returned). */
    setEnv: (slug: string, env: Record<string, string>) =>
      request<Record<string, string>>("PUT", `/api/apps/${enc(slug)}/env`, env),
    /** Replaces the app's endpoints (labels in the compose file, as a new version) and deploys it. */
    setEndpoints: (slug: string, list: EndpointEdit[]) => request<Accepted>("PUT", `/api/apps/${enc(slug)}/endpoints`, list),
    activity: (slug: string, f: ActivityFilter, signal?: AbortSignal) =>
      request<ActivityPage>("GET", `/api/apps/${enc(slug)}/activity${activityQuery(f)}`, undefined, { signal }),
    /** Certificate state of every host of the app. */
    certs: (slug: string) => request<CertInfo[]>("GET", `/api/apps/${enc(slug)}/certs`),
    /** Upload a custom certificate (PEM chain, leaf first) and its key; 400 says why it was refused. */
    putCert: (slug: string, domain: string, cert: string, key: string) =>
      request<UploadedCert>("PUT", `/api/apps/${enc(slug)}/certs/${enc(domain)}`, { cert, key }),
    removeCert: (slug: string, domain: string) => request<void>("DELETE", `/api/apps/${enc(slug)}/certs/${enc(domain)}`),
    requestStats: (slug: string, range: string) =>
      request<RequestStats>("GET", `/api/apps/${enc(slug)}/request-stats?range=${enc(range)}`),
    metrics: (slug: string, range: string) => request<AppMetrics>("GET", `/api/apps/${enc(slug)}/metrics?range=${enc(range)}`),
  },

  systemMetrics: (range: string) => request<SystemMetrics>("GET", `/api/metrics/system?range=${enc(range)}`),

  alerts: {
    rules: () => request<AlertRule[]>("GET", "/api/alerts/rules"),
    create: (rule: Partial<AlertRuleInput>) => request<AlertRule>("POST", "/api/alerts/rules", rule),
    update: (id: number, rule: Partial<AlertRuleInput>) => request<AlertRule>("PUT", `/api/alerts/rules/${id}`, rule),
    remove: (id: number) => request<void>("DELETE", `/api/alerts/rules/${id}`),
    /** Hold notifications back until `until` (RFC 3339); null lifts the silence. */
    silence: (id: number, until: string | null) => request<AlertRule>("POST", `/api/alerts/rules/${id}/silence`, { until }),
    history: (f: AlertHistoryFilter, signal?: AbortSignal) =>
      request<AlertHistoryPage>("GET", `/api/alerts/history${historyQuery(f)}`, undefined, { signal }),
  },

  backups: {
    detected: (slug: string) => request<DetectedStrategy[]>("GET", `/api/apps/${enc(slug)}/backups/detected`),
    configs: (slug: string) => request<BackupConfig[]>("GET", `/api/apps/${enc(slug)}/backups/configs`),
    create: (slug: string, c: BackupConfigInput) => request<BackupConfig>("POST", `/api/apps/${enc(slug)}/backups/configs`, c),
    /** `target.secret_key` as the mask keeps the stored secret. */
    update: (id: number, c: BackupConfigInput) => request<BackupConfig>("PUT", `/api/backups/configs/${id}`, c),
    remove: (id: number) => request<void>("DELETE", `/api/backups/configs/${id}`),
    run: (id: number) => request<{ run_id: number }>("POST", `/api/backups/configs/${id}/run`),
    runs: (slug: string) => request<BackupRun[]>("GET", `/api/apps/${enc(slug)}/backups/runs`),
    /** A plain link (the session cookie goes with it); S3 answers with a redirect to a presigned URL. */
    downloadHref: (runId: number) => `/api/backups/runs/${runId}/download`,
    restore: (runId: number) => request<{ restore_id: number }>("POST", `/api/backups/runs/${runId}/restore`),
    restores: (slug: string) => request<BackupRestore[]>("GET", `/api/apps/${enc(slug)}/backups/restores`),
    /** multipart `file`, `strategy`, `container?`; a refused archive answers 400 naming the entry, a busy server 429. */
    uploadRestore: (slug: string, form: FormData) =>
      upload<{ restore_id: number }>(`/api/apps/${enc(slug)}/backups/upload-restore`, form),
  },

  webhooks: {
    list: () => request<WebhookDestination[]>("GET", "/api/webhooks"),
    create: (w: WebhookInput) => request<WebhookDestination>("POST", "/api/webhooks", w),
    update: (id: number, w: WebhookInput) => request<WebhookDestination>("PUT", `/api/webhooks/${id}`, w),
    remove: (id: number) => request<void>("DELETE", `/api/webhooks/${id}`),
    /** With `id`, the stored destination's url, kind and secret are used for what `t` leaves out. */
    test: (t: Partial<WebhookTestRequest> & { id?: number }) => request<WebhookTestResult>("POST", "/api/webhooks/test", t),
    deliveries: (id: number) => request<WebhookDelivery[]>("GET", `/api/webhooks/${id}/deliveries`),
  },
};
