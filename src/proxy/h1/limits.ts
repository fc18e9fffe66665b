/**
 * The raw engine's limits: how many client connections it holds, how large a request head may be, and how long each
 * wait may last. Defaults suit a 1 GB VPS serving real web apps (a page load is a hundred requests over a few
 * connections from one address); every value is a `proxy.*` config key (docs/configuration.md).
 */

export interface EngineLimits {
  /** Client connections open at once over all listeners; a connection past it is closed at once. */
  maxConnections: number;
  /** Client connections open at once from one peer address (trusted proxies are exempt). */
  maxConnectionsPerIp: number;
  /** Most bytes of a request head (request line and fields); more answers 431. */
  maxHeaderBytes: number;
  /** Most header field lines of a request (and of its trailer section); more answers 431. */
  maxHeaders: number;
  /** A request head (or a TLS handshake) must be complete this long after its first byte; else the connection drops. */
  headerTimeoutMs: number;
  /** A kept-alive client connection with no request in progress closes after this long. */
  idleTimeoutMs: number;
  /** Longest gap between bytes of a request body; then 408 (or a close once a response has started). */
  bodyTimeoutMs: number;
  /** Longest a client may take to read what the proxy has for it (no progress at all); then the connection drops. */
  sendTimeoutMs: number;
  /** Longest gap between bytes of a response body from an app; then the client connection is closed. */
  upstreamBodyTimeoutMs: number;
  /** An idle kept-alive upstream connection is closed after this long. */
  upstreamIdleMs: number;
  /** Idle upstream connections kept per replica. */
  upstreamMaxIdle: number;
}

export const DEFAULT_LIMITS: Readonly<EngineLimits> = Object.freeze({
  maxConnections: 4096,
  maxConnectionsPerIp: 256,
  maxHeaderBytes: 16 * 1024,
  maxHeaders: 100,
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 120_000,
  bodyTimeoutMs: 60_000,
  sendTimeoutMs: 60_000,
  upstreamBodyTimeoutMs: 300_000,
  upstreamIdleMs: 4_000,
  upstreamMaxIdle: 256,
});

/** `partial` over the defaults. */
export function engineLimits(partial: Partial<EngineLimits> = {}): EngineLimits {
  const out = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(partial)) if (v !== undefined) (out as Record<string, number>)[k] = v;
  return out;
}
