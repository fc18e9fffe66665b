/**
 * What the alert evaluator reads and whom it tells, as narrow interfaces: the composition root wires the real apps,
 * request stats, certificates and webhooks; tests pass scripted ones.
 */
import type { AlertNotification } from "../../shared/alerts";

/** Sends a notification to webhook destinations (the webhooks module); never throws, delivery runs in the background. */
export interface Notifier {
  notify(webhookIds: number[], notification: AlertNotification): void;
}

/** The apps the evaluator watches. */
export interface AppsSource {
  /** Slugs of every live (not removed) app. */
  live(): string[];
  /** Slugs of live apps that have been deployed (a version runs or ran; stopped ones included). */
  deployed(): string[];
  /** Running containers of an app now; null when that is unknown (engine unreachable, or a deploy in progress). */
  running(slug: string): number | null;
}

/** Request counts of an app over the last `windowMs`, from the proxy's request stats. */
export interface RequestSource {
  window(slug: string, windowMs: number): { requests: number; errors5xx: number };
}

/** A certificate served for a host of an app. */
export interface ServedCert {
  app: string;
  host: string;
  /** Expiry, ms since the epoch. */
  notAfter: number;
}

/** Certificates the proxy serves (ACME and custom ones; the local CA renews its own). */
export interface CertSource {
  certs(): ServedCert[];
}
