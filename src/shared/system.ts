/** Wire shapes of the system routes (snake_case, as sent). */
import type { TlsMode } from "./tls";

/** GET /api/system/info */
export interface SystemInfo {
  version: string;
  commit: string;
  tls_mode: TlsMode;
  domain: string | null;
  /** Where the proxy answers: HTTPS (HTTP in off mode); null before the proxy started. */
  proxy_port: number | null;
  /** The plain HTTP listener; null when disabled or not started. */
  http_port: number | null;
  /** Connections the proxy holds now and has refused since start, against its caps; null before it started. */
  proxy_connections: { open: number; refused: number; max: number; max_per_ip: number } | null;
  /** "ok", or why Docker cannot be used. */
  docker: string;
}

/** GET and PUT /api/system/public-host */
export interface PublicHost {
  public_host: string;
}
