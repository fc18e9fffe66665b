/**
 * The seams of the reverse proxy: the request handler (routing, forwarding, limits, stats) on one side, the
 * listeners and certificates (plain, TLS with SNI, ACME challenges) on the other. Listeners call the handler; the
 * certificate source tells listeners what to serve; the stats sink takes what the handler counts.
 */
export type TlsMode = "auto" | "custom" | "local" | "off";

/** What a listener knows about a connection and passes to the handler. */
export interface ConnInfo {
  /** The client address (already resolved through trusted proxies where that applies). */
  clientIp: string;
  /** The request arrived over TLS. */
  secure: boolean;
  /**
   * The peer is a trusted proxy: its X-Forwarded-For chain (kept as far as `clientIp`), X-Forwarded-Proto/Host,
   * Forwarded and X-Real-IP are passed on instead of replaced. Absent or false: they are replaced.
   */
  trustForwarded?: boolean;
}

/** The proxy's request path, independent of how connections arrive. */
export interface ProxyHandler {
  /** Routing, limits and stats, as the raw engine uses them. */
  core: import("./handler").ProxyCore;
}

/** One answered request, as the proxy reports it. */
export interface RequestSample {
  status: number;
  /** Time to response headers, ms. */
  ms: number;
  /** Request path without the query. */
  path: string;
  /** Response body size when known. */
  bytes?: number;
}

/** Where the proxy reports each app request; it must be O(1) and in memory (it runs on the request path). */
export interface StatsSink {
  record(app: string, sample: RequestSample): void;
}

/** A certificate for one host name (`*.example.com` allowed), PEM key and full chain. */
export interface SniEntry {
  serverName: string;
  key: string;
  cert: string;
}

/** A pending TLS-ALPN-01 challenge: the special certificate to present for `host` on ALPN `acme-tls/1`. */
export interface AlpnChallenge {
  host: string;
  key: string;
  cert: string;
}

/** Everything the listeners need from certificate management. */
export interface CertSource {
  /** Certificates to serve, one per host (the newest valid one). */
  sni(): SniEntry[];
  /** Served to clients that send no SNI or an unknown host. */
  fallback(): SniEntry;
  /** Called after sni()/fallback()/alpnChallenges() change; returns the unsubscribe function. */
  onChange(fn: () => void): () => void;
  /** ACME HTTP-01: the key authorization for a token, or null. */
  http01(token: string): string | null;
  /** TLS-ALPN-01 challenges in flight. */
  alpnChallenges(): AlpnChallenge[];
}
