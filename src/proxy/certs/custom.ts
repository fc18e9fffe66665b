/**
 * Validation of an uploaded certificate: the chain and key parse, the key belongs to the leaf, the leaf covers the
 * domain and has not expired. Failures are short reasons safe to show in a 400.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import { badRequest } from "../../lib/errors";
import { certMeta, pemCertificates } from "./store";

/** Largest accepted upload (certificate and key together), enforced by the route. */
export const MAX_CUSTOM_CERT_BYTES = 256 * 1024;

/** What the API shows about an uploaded certificate. Times are RFC 3339. */
export interface CustomCertInfo {
  notBefore: string;
  notAfter: string;
  issuer: string;
  subject: string;
  sans: string[];
  fingerprint: string;
}

/** Whether a certificate name (`*.example.com` allowed, one label deep) covers `host`. */
export function nameCovers(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  const h = host.toLowerCase();
  if (p === h) return true;
  if (!p.startsWith("*.") || h.startsWith("*.") || isIP(h)) return false;
  const dot = h.indexOf(".");
  return dot > 0 && h.slice(dot + 1) === p.slice(2);
}

/** Whether any of `sans` covers `host`. */
export function sansCover(sans: readonly string[], host: string): boolean {
  return sans.some((s) => nameCovers(s, host));
}

function parseKey(keyPem: string): KeyObject {
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(keyPem)) {
    throw badRequest("the private key is encrypted; upload it without a passphrase");
  }
  if (!/-----BEGIN (RSA |EC )?PRIVATE KEY-----/.test(keyPem)) throw badRequest("the private key is not a PEM private key");
  try {
    return createPrivateKey(keyPem);
  } catch {
    throw badRequest("the private key could not be parsed");
  }
}

/**
 * Check an uploaded chain (leaf first, intermediates after) and key for `domain`; returns what the API shows.
 * Throws an HttpError 400 with the reason.
 */
export function validateCustomCert(domain: string, certPem: string, keyPem: string, now = Date.now()): CustomCertInfo {
  const blocks = pemCertificates(certPem);
  if (blocks.length === 0) throw badRequest("the certificate is not a PEM certificate");
  let chain: X509Certificate[];
  try {
    chain = blocks.map((b) => new X509Certificate(b));
  } catch {
    throw badRequest("the certificate could not be parsed");
  }
  const leaf = chain[0];
  const key = parseKey(keyPem);
  let matches = false;
  try {
    matches = leaf.checkPrivateKey(key);
  } catch {
    matches = false;
  }
  if (!matches) throw badRequest("the key does not match the certificate");
  for (let i = 1; i < chain.length; i++) {
    if (!chain[i - 1].checkIssued(chain[i]) || !chain[i - 1].verify(chain[i].publicKey)) {
      throw badRequest(`the chain is out of order: certificate ${i + 1} did not issue certificate ${i}`);
    }
  }
  const meta = certMeta(leaf);
  if (!sansCover(meta.sans, domain)) throw badRequest(`the certificate does not cover ${domain}`);
  if (meta.notAfter <= now) throw badRequest(`the certificate expired on ${new Date(meta.notAfter).toISOString()}`);
  return {
    notBefore: new Date(meta.notBefore).toISOString(),
    notAfter: new Date(meta.notAfter).toISOString(),
    issuer: meta.issuer,
    subject: meta.subject,
    sans: meta.sans,
    fingerprint: meta.fingerprint,
  };
}
