/** Wire shapes of apps (snake_case, as sent): the view of GET /api/apps, its compose, and container log frames. */
import type { LastDeploy } from "./deploys";
import type { TlsMode } from "./tls";

/** Status of an app as the server derives it from the engine. */
export type AppStatus = "running" | "degraded" | "stopped" | "failed" | "deploying" | "removed" | "unknown";

/** One container of a service. */
export interface AppContainer {
  /** The first 12 characters of the container id. */
  id: string;
  name: string;
  /** The replica number compose gave it (null when the container has no compose label). */
  number: number | null;
  state: string;
  status: string;
  /** healthy, unhealthy, starting, or null without a healthcheck. */
  health: string | null;
}

/** One compose service of an app. */
export interface AppService {
  name: string;
  /** null for a service built from source without an image name. */
  image: string | null;
  replicas: number;
  /** `host-ip:published:target/protocol` */
  ports: string[];
  scalable: { ok: true } | { ok: false; reason: string };
  containers: AppContainer[];
}

/** A routed endpoint (from the sundeck.* labels); `tls` null means the server's mode. */
export interface AppEndpoint {
  service: string;
  hosts: string[];
  port: number;
  path: string;
  tls: TlsMode | null;
}

/**
 * One entry of the body of PUT /api/apps/{slug}/endpoints (the body is the app's complete list): one host routed to a
 * service's port. `path` defaults to `/`, `tls` null or absent means the server's mode.
 */
export interface EndpointEdit {
  service: string;
  domain: string;
  port: number;
  path?: string | null;
  tls?: TlsMode | null;
}

/** GET /api/apps/{slug} and each entry of GET /api/apps. */
export interface AppView {
  slug: string;
  status: AppStatus;
  stopped: boolean;
  services: AppService[];
  endpoints: AppEndpoint[];
  current_version: { id: number; version: number } | null;
  /** The catalog template the app was made from (POST /api/templates/{id}/deploy), null otherwise. */
  template: { id: string; version: number } | null;
  last_deploy: LastDeploy | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** GET /api/apps/{slug}/compose */
export interface AppCompose {
  slug: string;
  compose: string;
  hash: string;
  current_version_id: number | null;
}

/** A frame of /api/apps/{slug}/logs: a line, or the single error frame. */
export interface ContainerLogFrame {
  /** RFC 3339 time of the line, when the engine gave one. */
  ts?: string;
  stream?: "stdout" | "stderr";
  line?: string;
  error?: string;
}
