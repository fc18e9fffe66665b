/** Pure parts of the Endpoints tab: effective TLS mode, host links, certificate expiry levels and labels. */
import type { AppEndpoint, CertInfo, TlsMode } from "../../types";

/** Fewer days left than this and the expiry is shown as a warning. */
export const EXPIRY_WARN_DAYS = 14;

const DAY_MS = 86_400_000;

/** The mode an endpoint is served with: its own, else the server's; with the server in `off` nothing has TLS. */
export function effectiveTls(ep: Pick<AppEndpoint, "tls">, server: TlsMode): { mode: TlsMode; inherited: boolean } {
  if (server === "off") return { mode: "off", inherited: ep.tls === null || ep.tls === "off" };
  return ep.tls === null ? { mode: server, inherited: true } : { mode: ep.tls, inherited: false };
}

/** The address of a host's endpoint (`https://host/path`, `http://` when TLS is off); null for a wildcard host. */
export function endpointUrl(host: string, path: string, mode: TlsMode): string | null {
  if (host.includes("*")) return null;
  const h = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const p = path.startsWith("/") ? path : `/${path}`;
  return `${mode === "off" ? "http" : "https"}://${h}${p}`;
}

export type ExpiryLevel = "ok" | "warn" | "expired";

/** ok, warn (under EXPIRY_WARN_DAYS days left) or expired. */
export function expiryLevel(notAfter: string, now = Date.now()): ExpiryLevel {
  const ms = Date.parse(notAfter) - now;
  if (ms <= 0) return "expired";
  return ms < EXPIRY_WARN_DAYS * DAY_MS ? "warn" : "ok";
}

/** "expired 3 days ago", "expired today", "less than a day left", "1 day left", "90 days left" (whole days, rounded). */
export function expiryText(notAfter: string, now = Date.now()): string {
  const ms = Date.parse(notAfter) - now;
  const d = Math.round(Math.abs(ms) / DAY_MS);
  const days = `${d} ${d === 1 ? "day" : "days"}`;
  if (ms <= 0) return d === 0 ? "expired today" : `expired ${days} ago`;
  return ms < DAY_MS ? "less than a day left" : `${days} left`;
}

const SOURCES: Record<NonNullable<CertInfo["source"]>, string> = {
  acme: "ACME",
  custom: "uploaded",
  local: "local CA",
  fallback: "local CA (fallback)",
};

/** Where a served certificate comes from, in words. */
export function sourceText(source: CertInfo["source"]): string {
  return source === null ? "none" : (SOURCES[source] ?? source);
}

const MODES: Record<TlsMode, string> = {
  auto: "automatic certificates (ACME)",
  custom: "uploaded certificates",
  local: "certificates from the local CA",
  off: "plain HTTP, no TLS",
};

/** What a TLS mode means, in a few words. */
export function modeText(mode: TlsMode): string {
  return MODES[mode] ?? mode;
}

/** Whether visitors of these hosts see certificates of the local CA (local mode, or a fallback while waiting). */
export function usesLocalCa(modes: TlsMode[], certs: CertInfo[]): boolean {
  return modes.includes("local") || certs.some((c) => c.source === "local" || c.source === "fallback");
}

/** The failure worth showing as an error: a failed or expired certificate. Other notes (a fallback's) are hints. */
export function certProblem(c: CertInfo, now = Date.now()): string | null {
  if (c.status === "failed") return c.error ?? "the certificate could not be obtained";
  if (c.not_after && c.source !== "fallback" && expiryLevel(c.not_after, now) === "expired") return c.error ?? "expired";
  return null;
}
