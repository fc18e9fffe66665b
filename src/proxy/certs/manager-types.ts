/** The certificate manager's public shapes: the hosts it is given, what it reports, how it is built and used. */
import type { Clock } from "../../lib/time";
import type { Log } from "../../log/logger";
import type { CertSource, TlsMode } from "../types";
import type { ChallengeType } from "./acme";
import type { ProbeTarget } from "./challenges";
import type { CustomCertInfo } from "./custom";
import type { LocalCa } from "./local-ca";
import type { CertStore } from "./store";

/** One host of the route table and its effective TLS mode. */
export interface HostSpec {
  host: string;
  tls: TlsMode;
  app?: string;
}

export type CertStatus = "issued" | "pending" | "failed" | "none";

/** What the API shows about the certificate of a host. Times are RFC 3339. */
export interface CertInfo {
  host: string;
  mode: TlsMode;
  /** issued: a real certificate is served; pending: a fallback while waiting; failed: the last attempt failed; none: off. */
  status: CertStatus;
  /** Where the served certificate comes from. */
  source: "acme" | "custom" | "local" | "fallback" | null;
  notBefore: string | null;
  notAfter: string | null;
  issuer: string | null;
  subject: string | null;
  /** Names of the served certificate (subjectAltName). */
  sans: string[] | null;
  /** SHA-256 of the served certificate, colon-separated hex. */
  fingerprint: string | null;
  error: string | null;
  /** auto: the next order or renewal attempt. */
  nextAttemptAt: string | null;
}

export interface CertManagerOptions {
  store: CertStore;
  log: Log;
  clock?: Clock;
  /** The global tls.mode; `off` makes no certificates at all. */
  mode: TlsMode;
  /** tls.email, the ACME account contact. */
  email?: string;
  /** ACME directory (Let's Encrypt production by default). */
  directoryUrl?: string;
  /** Extra CA trusted for the ACME directory's HTTPS (test CAs). */
  caTrust?: string;
  /** Challenge types in order of preference: http-01 needs the plain listener. */
  challenges?: readonly ChallengeType[];
  /** Where our TLS listener answers, to confirm it presents a TLS-ALPN-01 certificate before the CA validates. */
  tlsProbe?: ProbeTarget;
  /** Concurrent ACME orders. */
  concurrency?: number;
  /** Host name in the local CA's name (os.hostname() by default). */
  hostname?: string;
}

/** The certificate source of the listeners plus the operations the API and the route table need. */
export interface CertManager extends CertSource {
  /** Replace the set of hosts (called when the route table changes); resolves once non-ACME certificates are in place. */
  setHosts(hosts: readonly HostSpec[]): Promise<void>;
  /** Validate and store an uploaded certificate (throws HttpError 400 with the reason). */
  putCustom(app: string, domain: string, certPem: string, keyPem: string): Promise<CustomCertInfo>;
  /** Remove an uploaded certificate; false when there was none. */
  removeCustom(app: string, domain: string): Promise<boolean>;
  certInfo(host: string): CertInfo | null;
  /** The host is served without TLS (its mode is off): the plain listener answers it instead of redirecting. */
  isPlain(host: string): boolean;
  /** The local CA (absent when the global mode is off). */
  localCa(): LocalCa | null;
  /** Order a new ACME certificate for `host` now; rejects with the reason when it fails. */
  renew(host: string): Promise<void>;
  /** Run the due work (orders, renewals, local leaf renewals) now. */
  refresh(): Promise<void>;
  /** Resolves when no ACME order is running. */
  idle(): Promise<void>;
  stop(): void;
}
