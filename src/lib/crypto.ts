/**
 * Keys derived once from master_secret (HKDF-SHA256, one label per purpose) and the primitives built on them:
 * AES-256-GCM for stored credentials, HMAC-SHA256 for API keys and webhooks, constant-time comparison.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

/** Every key Sundeck needs, derived from master_secret at start. Never logged. */
export interface Keys {
  /** AES-256-GCM key for credentials at rest. */
  readonly encryption: Buffer;
  /** HS256 key for session JWTs. */
  readonly session: Uint8Array;
  /** HMAC key under which API keys are stored. */
  readonly apiKey: Buffer;
}

const SALT = Buffer.from("sundeck/v1");

function derive(secret: string, label: string): Buffer {
  return Buffer.from(hkdfSync("sha256", Buffer.from(secret, "utf8"), SALT, Buffer.from(label), 32));
}

/** Derive all purpose keys from the master secret (done once per process). */
export function deriveKeys(masterSecret: string): Keys {
  return Object.freeze({
    encryption: derive(masterSecret, "encryption"),
    session: new Uint8Array(derive(masterSecret, "session-jwt")),
    apiKey: derive(masterSecret, "api-key-hmac"),
  });
}

const VERSION = "v1";

/** Encrypt a UTF-8 string with AES-256-GCM: `v1:` + base64(iv | ciphertext | tag). */
export function encrypt(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return `${VERSION}:${Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64")}`;
}

/** Decrypt what `encrypt` produced; throws when the value was tampered with or made under another key. */
export function decrypt(key: Buffer, sealed: string): string {
  const colon = sealed.indexOf(":");
  const version = sealed.slice(0, colon);
  const data = sealed.slice(colon + 1);
  if (colon < 0 || version !== VERSION || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) throw new Error("unknown ciphertext format");
  const raw = Buffer.from(data, "base64");
  if (raw.length < 28) throw new Error("ciphertext too short");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(raw.length - 16));
  return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString("utf8");
}

/** Sealing bound to one key: what services use for credentials at rest. */
export interface Secrets {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

/** Bind encrypt/decrypt to the derived encryption key. */
export function createSecrets(key: Buffer): Secrets {
  return { seal: (p) => encrypt(key, p), open: (s) => decrypt(key, s) };
}

/** Hex HMAC-SHA256 of a value. */
export function hmacHex(key: Buffer | string, value: string | Uint8Array): string {
  return createHmac("sha256", key).update(value).digest("hex");
}

/** Hex SHA-256 of a value. */
export function sha256Hex(value: string | Uint8Array): string {
  return createHash("sha256").update(value).digest("hex");
}

/** Compare two strings in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/** `n` random bytes as lowercase hex. */
export function randomHex(n: number): string {
  return randomBytes(n).toString("hex");
}
