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
  /**
   * WebSocket streams open now against the `streams.*` caps, how many the caps refused and how many were closed for
   * falling behind since start, and the containers whose logs are followed (one engine follow each, shared).
   */
  streams: {
    open: number;
    max_open: number;
    max_per_user: number;
    /** Bytes all streams together may hold unsent (`streams.max_buffered_mib`). */
    max_buffered: number;
    refused: number;
    too_slow: number;
    log_feeds: number;
    log_viewers: number;
  };
}

/** GET and PUT /api/system/public-host */
export interface PublicHost {
  public_host: string;
}
