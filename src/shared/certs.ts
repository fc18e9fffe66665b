/** Wire shapes of the certificate routes (snake_case, as sent). */
import type { TlsMode } from "./tls";

/** An entry of GET /api/apps/{slug}/certs: one per host of the app. Times are RFC 3339. */
export interface CertInfo {
  domain: string;
  mode: TlsMode | null;
  /** issued: a real certificate is served; pending: a fallback while waiting; failed: the last attempt failed. */
  status: "issued" | "pending" | "failed" | "none";
  source: "acme" | "custom" | "local" | "fallback" | null;
  not_before: string | null;
  not_after: string | null;
  issuer: string | null;
  subject: string | null;
  /** Names of the served certificate (subjectAltName). */
  sans: string[] | null;
  /** SHA-256 of the served certificate, colon-separated hex. */
  fingerprint: string | null;
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
