/**
 * Certificates and keys on disk under `<data_dir>/certs/`: the ACME account key and issued certificates, uploaded
 * custom certificates, the local CA and its leaves. Directories are 0700, files 0600, every write atomic.
 */
import { X509Certificate } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import { ensurePrivateDir, writeFileAtomic } from "../../lib/fs";

/** A PEM certificate chain (leaf first) and its private key. */
export interface KeyPair {
  cert: string;
  key: string;
}

/** What Sundeck shows and schedules from: validity, names, issuer. */
export interface CertMeta {
  notBefore: number;
  notAfter: number;
  /** DNS names and IP addresses of the subjectAltName extension. */
  sans: string[];
  subject: string;
  issuer: string;
  /** SHA-256 fingerprint of the leaf, colon-separated hex. */
  fingerprint: string;
}

const LABEL = "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?";
const HOST_RE = new RegExp(`^(\\*\\.)?(${LABEL}\\.)*${LABEL}$`);
const SLUG_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Whether `host` is a lowercase DNS name (optionally `*.` wildcard) or an IP address: safe as a path segment. */
export function isCertHost(host: string): boolean {
  if (host.length > 253) return false;
  return HOST_RE.test(host) || isIP(host) !== 0;
}

function checkHost(host: string): string {
  if (!isCertHost(host)) throw new Error(`invalid certificate host name: ${JSON.stringify(host).slice(0, 80)}`);
  // "*" is legal in file names but awkward in shells: a wildcard is stored as "_wildcard.example.com"
  return host.replace(/^\*\./, "_wildcard.").replace(/:/g, "_");
}

/** Names that would collide with the files beside the per-host directories. */
const RESERVED = new Set(["account.key", "ca.crt", "ca.key"]);

function checkDirHost(host: string): string {
  if (RESERVED.has(host)) throw new Error(`reserved certificate host name: ${host}`);
  return checkHost(host);
}

function checkSlug(slug: string): string {
  if (!SLUG_RE.test(slug) || slug.length > 63) throw new Error(`invalid app slug: ${JSON.stringify(slug).slice(0, 80)}`);
  return slug;
}

/** The PEM blocks of type CERTIFICATE in `text`, in order. */
export function pemCertificates(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** Validity, names and issuer of the first certificate in a PEM chain. */
export function certMeta(pem: string | X509Certificate): CertMeta {
  const x = typeof pem === "string" ? new X509Certificate(pemCertificates(pem)[0] ?? pem) : pem;
  return {
    notBefore: Date.parse(x.validFrom),
    notAfter: Date.parse(x.validTo),
    sans: parseSans(x.subjectAltName),
    subject: x.subject.replace(/\n/g, ", "),
    issuer: x.issuer.replace(/\n/g, ", "),
    fingerprint: x.fingerprint256,
  };
}

function parseSans(text: string | undefined): string[] {
  if (!text) return [];
  return text
    .split(",")
    .map((s) => s.trim())
    .map((s) => /^(DNS|IP Address):(.+)$/.exec(s)?.[2] ?? "")
    .filter(Boolean)
    .map((s) => s.toLowerCase());
}

/** Storage of every certificate Sundeck serves. Host names and slugs are validated before they touch a path. */
export interface CertStore {
  /** `<data_dir>/certs`. */
  readonly root: string;
  readAccountKey(): string | null;
  writeAccountKey(pem: string): void;
  readAcme(host: string): KeyPair | null;
  writeAcme(host: string, pair: KeyPair): void;
  readCustom(app: string, domain: string): KeyPair | null;
  writeCustom(app: string, domain: string, pair: KeyPair): void;
  /** Remove an uploaded certificate; false when there was none. */
  removeCustom(app: string, domain: string): boolean;
  /** Every uploaded certificate's app and domain (wildcards as `*.example.com`). */
  listCustom(): Array<{ app: string; domain: string }>;
  readLocalCa(): KeyPair | null;
  writeLocalCa(pair: KeyPair): void;
  readLocal(host: string): KeyPair | null;
  writeLocal(host: string, pair: KeyPair): void;
}

/** The file-backed store under `<dataDir>/certs`. */
export function createCertStore(dataDir: string): CertStore {
  const root = join(dataDir, "certs");
  ensurePrivateDir(root);

  const readPair = (dir: string): KeyPair | null => {
    const certPath = join(dir, "cert.pem");
    const keyPath = join(dir, "key.pem");
    if (!existsSync(certPath) || !existsSync(keyPath)) return null;
    return { cert: readFileSync(certPath, "utf8"), key: readFileSync(keyPath, "utf8") };
  };
  const writePair = (dir: string, pair: KeyPair, certName = "cert.pem", keyName = "key.pem") => {
    ensurePrivateDir(dir);
    // key first: a reader that finds the new certificate always finds its key
    writeFileAtomic(join(dir, keyName), pair.key, 0o600);
    writeFileAtomic(join(dir, certName), pair.cert, 0o600);
  };
  const readText = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : null);
  const customDir = (app: string, domain: string) => join(root, "custom", checkSlug(app), checkHost(domain));

  return {
    root,
    readAccountKey: () => readText(join(root, "acme", "account.key")),
    writeAccountKey: (pem) => {
      ensurePrivateDir(join(root, "acme"));
      writeFileAtomic(join(root, "acme", "account.key"), pem, 0o600);
    },
    readAcme: (host) => readPair(join(root, "acme", checkDirHost(host))),
    writeAcme: (host, pair) => writePair(join(root, "acme", checkDirHost(host)), pair),
    readCustom: (app, domain) => readPair(customDir(app, domain)),
    writeCustom: (app, domain, pair) => {
      ensurePrivateDir(join(root, "custom", checkSlug(app)));
      writePair(customDir(app, domain), pair);
    },
    removeCustom: (app, domain) => {
      const dir = customDir(app, domain);
      if (!existsSync(dir)) return false;
      rmSync(dir, { recursive: true, force: true });
      return true;
    },
    listCustom: () => {
      const base = join(root, "custom");
      if (!existsSync(base)) return [];
      return readdirSync(base)
        .filter((app) => SLUG_RE.test(app))
        .flatMap((app) =>
          readdirSync(join(base, app))
            .filter((d) => existsSync(join(base, app, d, "cert.pem")))
            .map((d) => ({ app, domain: d.replace(/^_wildcard\./, "*.").replace(/_/g, ":") })),
        );
    },
    readLocalCa: () => {
      const cert = readText(join(root, "local", "ca.crt"));
      const key = readText(join(root, "local", "ca.key"));
      return cert && key ? { cert, key } : null;
    },
    writeLocalCa: (pair) => writePair(join(root, "local"), pair, "ca.crt", "ca.key"),
    readLocal: (host) => readPair(join(root, "local", checkDirHost(host))),
    writeLocal: (host, pair) => writePair(join(root, "local", checkDirHost(host)), pair),
  };
}
