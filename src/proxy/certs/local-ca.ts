/**
 * The local certificate authority for `local` mode and for fallbacks: a root made once and kept (10 years) and a
 * 90-day leaf per host, renewed within 30 days of expiry. node-forge signs; node:crypto makes the keys (fast, native).
 */
import { createHash, generateKeyPair, sign, X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import { hostname as osHostname } from "node:os";
import type { Clock } from "../../lib/time";
import { type CertStore, certMeta, type KeyPair } from "./store";

const DAY = 86_400_000;
/** Leaf lifetime. */
export const LOCAL_LEAF_DAYS = 90;
/** A leaf with less than this left is replaced. */
export const LOCAL_RENEW_BEFORE_MS = 30 * DAY;
const CA_YEARS = 10;

type Forge = typeof import("node-forge");
let forgeModule: Promise<Forge> | undefined;
// node-forge is large; only load it when a certificate has to be made
const loadForge = () => (forgeModule ??= import("node-forge").then((m) => ((m as any).default ?? m) as Forge));

/** The local CA: its certificate for the trust page and leaves for hosts. */
export interface LocalCa {
  /** PEM of the root certificate (what users install). */
  caPem(): string;
  /** SHA-256 fingerprint of the root, colon-separated hex. */
  caFingerprint(): string;
  /** Subject common name of the root. */
  caName(): string;
  /** A leaf for `host` signed by this CA: the stored one while it has more than 30 days left, else a new one. */
  leaf(host: string): Promise<KeyPair>;
  /** Whether `pair` was signed by this CA and is good for more than 30 days at `now`. */
  isFresh(pair: KeyPair, now?: number): boolean;
}

function rsaKey(bits: number): Promise<{ publicKey: string; privateKey: string }> {
  return new Promise((resolve, reject) =>
    generateKeyPair(
      "rsa",
      {
        modulusLength: bits,
        publicKeyEncoding: { type: "spki", format: "pem" },
        privateKeyEncoding: { type: "pkcs8", format: "pem" },
      },
      (err, publicKey, privateKey) => (err ? reject(err) : resolve({ publicKey, privateKey })),
    ),
  );
}

function serial(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[0] &= 0x7f; // positive
  b[0] |= 0x01; // and without a leading zero byte
  return Buffer.from(b).toString("hex");
}

/** Open the CA in `store`, creating and persisting it the first time. */
export async function openLocalCa(opts: { store: CertStore; clock: Clock; hostname?: string }): Promise<LocalCa> {
  const { store, clock } = opts;
  let ca = store.readLocalCa();
  if (!ca) {
    ca = await createRoot(clock.now(), opts.hostname ?? osHostname());
    store.writeLocalCa(ca);
  }
  const root = ca;
  const rootX509 = new X509Certificate(root.cert);
  const inFlight = new Map<string, Promise<KeyPair>>();

  const isFresh = (pair: KeyPair, now = clock.now()): boolean => {
    try {
      const x = new X509Certificate(pair.cert);
      if (!x.checkIssued(rootX509) || !x.verify(rootX509.publicKey)) return false;
      return certMeta(x).notAfter - now > LOCAL_RENEW_BEFORE_MS;
    } catch {
      return false;
    }
  };

  return {
    caPem: () => root.cert,
    caFingerprint: () => rootX509.fingerprint256,
    caName: () => /CN=([^\n,]+)/.exec(rootX509.subject)?.[1] ?? rootX509.subject,
    isFresh,
    leaf(host) {
      const stored = store.readLocal(host);
      if (stored && isFresh(stored)) return Promise.resolve(stored);
      let p = inFlight.get(host);
      if (!p) {
        p = createLeaf(root, host, clock.now())
          .then((pair) => {
            store.writeLocal(host, pair);
            return pair;
          })
          .finally(() => inFlight.delete(host));
        inFlight.set(host, p);
      }
      return p;
    },
  };
}

async function createRoot(now: number, host: string): Promise<KeyPair> {
  const forge = await loadForge();
  const { pki } = forge;
  const keys = await rsaKey(3072);
  const cert = pki.createCertificate();
  cert.publicKey = pki.publicKeyFromPem(keys.publicKey);
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(now - 3_600_000);
  const end = new Date(now);
  end.setUTCFullYear(end.getUTCFullYear() + CA_YEARS);
  cert.validity.notAfter = end;
  const attrs = [
    { name: "commonName", value: `Sundeck Local CA ${host}`.slice(0, 64) },
    { name: "organizationName", value: "Sundeck" },
  ];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  signNative(forge, cert, keys.privateKey);
  return { cert: pki.certificateToPem(cert), key: keys.privateKey };
}

/**
 * Sign as forge's `cert.sign` does, but with node:crypto: forge's JavaScript RSA takes about 200 ms per signature
 * with a 3072-bit key and blocks the event loop; OpenSSL takes 3 ms.
 */
function signNative(forge: Forge, cert: import("node-forge").pki.Certificate, keyPem: string): void {
  const oid = forge.pki.oids.sha256WithRSAEncryption;
  cert.signatureOid = oid;
  cert.siginfo.algorithmOid = oid;
  const tbs = (forge.pki as any).getTBSCertificate(cert) as import("node-forge").asn1.Asn1;
  (cert as any).tbsCertificate = tbs;
  const der = Buffer.from(forge.asn1.toDer(tbs).getBytes(), "binary");
  cert.signature = sign("sha256", der, keyPem).toString("binary");
}

async function createLeaf(ca: KeyPair, host: string, now: number): Promise<KeyPair> {
  const forge = await loadForge();
  const { pki } = forge;
  const [keys, caCert] = [await rsaKey(2048), pki.certificateFromPem(ca.cert)];
  const cert = pki.createCertificate();
  cert.publicKey = pki.publicKeyFromPem(keys.publicKey);
  cert.serialNumber = serial();
  // an hour back: clients with a slightly slow clock still accept a fresh leaf
  cert.validity.notBefore = new Date(now - 3_600_000);
  cert.validity.notAfter = new Date(now + LOCAL_LEAF_DAYS * DAY);
  // a common name holds at most 64 characters; the SAN is what clients check anyway
  cert.setSubject(host.length <= 64 ? [{ name: "commonName", value: host }] : [{ name: "organizationName", value: "Sundeck" }]);
  cert.setIssuer(caCert.subject.attributes);
  const altName = isIP(host) ? { type: 7, ip: host } : { type: 2, value: host };
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: [altName] },
    { name: "subjectKeyIdentifier" },
    { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  signNative(forge, cert, ca.key);
  return { cert: pki.certificateToPem(cert), key: keys.privateKey };
}

/**
 * A TLS-ALPN-01 challenge certificate (RFC 8737): self-signed, SAN = host, and the critical acmeIdentifier extension
 * holding SHA-256 of the key authorization. acme-client makes one with only keyCertSign in its key usage, which
 * BoringSSL (Bun's TLS) refuses to serve; this one has digitalSignature.
 */
export async function makeAlpnCertificate(host: string, keyAuthorization: string, now = Date.now()): Promise<KeyPair> {
  const forge = await loadForge();
  const { pki, asn1 } = forge;
  const keys = await rsaKey(2048);
  const cert = pki.createCertificate();
  cert.publicKey = pki.publicKeyFromPem(keys.publicKey);
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(now - 3_600_000);
  cert.validity.notAfter = new Date(now + 7 * DAY);
  const name = [{ name: "commonName", value: host.slice(0, 64) }];
  cert.setSubject(name);
  cert.setIssuer(name);
  const digest = createHash("sha256").update(keyAuthorization).digest().toString("binary");
  cert.setExtensions([
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "subjectAltName", altNames: [{ type: 2, value: host }] },
    { id: "1.3.6.1.5.5.7.1.31", critical: true, value: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, digest) },
  ]);
  signNative(forge, cert, keys.privateKey);
  return { cert: pki.certificateToPem(cert), key: keys.privateKey };
}
