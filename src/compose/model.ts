/**
 * Shapes of the compose library: what a parsed, interpolated compose project looks like to the rest of Sundeck, and
 * the one error type its checks throw (a 400 whose line names the service and the rule).
 */
import { HttpError } from "../lib/errors";

/** A compose file that cannot be deployed: `Bad Request: service "web": privileged is not allowed`. */
export class ComposeError extends HttpError {
  constructor(
    /** The offending service, or null for a project-level problem. */
    readonly service: string | null,
    /** Short rule id, e.g. `privileged`, `bind-mount`, `network-mode`, `yaml`. */
    readonly rule: string,
    message: string,
  ) {
    super(400, service ? `service "${service}": ${message}` : message);
  }
}

/** One published port, normalised from any compose syntax. */
export interface PortSpec {
  /** Host interface, "" when none was given (Sundeck then binds 127.0.0.1). */
  hostIp: string;
  /** Host port or range ("8080", "8080-8081"), "" for an ephemeral host port. */
  published: string;
  /** Container port or range ("80", "80-81"). */
  target: string;
  protocol: "tcp" | "udp" | "sctp";
}

/** An HTTP endpoint a service asks the proxy for (labels `sundeck.domain` / `sundeck.endpoints.<n>.*`). */
export interface Endpoint {
  service: string;
  hosts: string[];
  port: number;
  /** Path prefix, "/" when none. */
  path: string;
  tls: "auto" | "custom" | "local" | "off" | null;
}

/** Per-app settings read from labels. */
export interface AppLabels {
  endpoints: Endpoint[];
  ratelimit: { requests?: number; window?: string; burst?: number; by?: string } | null;
  /** IPs/CIDRs allowed to reach the app's endpoints; null when unrestricted. */
  allow: string[] | null;
  /** Registry names from `sundeck.registries`; [] for `none`; null when the label is absent. */
  registries: string[] | null;
}

/** What the rest of Sundeck needs to know about one service. */
export interface ServiceInfo {
  name: string;
  image: string | null;
  hasBuild: boolean;
  ports: PortSpec[];
  /** Environment variable names (values are never carried outside the document). */
  envKeys: string[];
  labels: Record<string, string>;
  /** `deploy.replicas` or `scale`, when given. */
  replicas: number | null;
  hasHealthcheck: boolean;
  pullPolicy: string | null;
  /** Named volumes the service mounts. */
  namedVolumes: string[];
  /** `sundeck.scalable` label, when given. */
  scalable: boolean | null;
  /** `container_name`, when given (a fixed name cannot be scaled). */
  containerName?: string | null;
  /** `network_mode`, when given. */
  networkMode?: string | null;
}

/** A parsed, interpolated compose project. */
export interface ComposeProject {
  /** The interpolated document (plain JSON-able data), what checks and rewrites work on. */
  doc: Record<string, any>;
  services: ServiceInfo[];
  /** Variables the file referenced that had no value (they became ""), so the caller can warn. */
  missingVars?: string[];
}

/** Where an app lives and what the host must keep away from it. */
export interface SafetyPolicy {
  /** Absolute directory of this app (`<apps_dir>/<slug>`). */
  appDir: string;
  appsDir: string;
  dataDir: string;
  /**
   * Host paths (absolute) that bind mounts and other host paths may name besides the app's own directory: the server
   * config's `compose.allowed_host_paths`, empty by default.
   */
  allowedHostPaths?: string[];
}
