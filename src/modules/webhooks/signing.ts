/**
 * Signing of generic webhook payloads (CONTRACT): `X-Sundeck-Timestamp: <unix seconds>` and
 * `X-Sundeck-Signature-256: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`. The timestamp is inside the signed
 * text, so a receiver that checks it against its own clock refuses a replayed delivery.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const TIMESTAMP_HEADER = "X-Sundeck-Timestamp";
export const SIGNATURE_HEADER = "X-Sundeck-Signature-256";

/** How far a receiver should let a timestamp stray from its clock, in seconds. */
export const DEFAULT_TOLERANCE_S = 300;

/** The signature header value for `body` sent at `timestamp` (unix seconds). */
export function signature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** Both headers of a generic delivery signed at `nowMs`. */
export function signatureHeaders(secret: string, body: string, nowMs: number): Record<string, string> {
  const ts = Math.floor(nowMs / 1000);
  return { [TIMESTAMP_HEADER]: String(ts), [SIGNATURE_HEADER]: signature(secret, ts, body) };
}

/**
 * What a receiver runs: true when `header` is the signature of `body` at `timestamp` (the header texts as received)
 * and that timestamp lies within `toleranceS` seconds of `nowMs`. Compared in constant time.
 */
export function verifySignature(
  secret: string,
  timestamp: string | null,
  body: string,
  header: string | null,
  nowMs: number,
  toleranceS = DEFAULT_TOLERANCE_S,
): boolean {
  if (!timestamp || !header || !/^\d{1,12}$/.test(timestamp) || !/^sha256=[0-9a-f]{64}$/.test(header)) return false;
  const ts = Number(timestamp);
  if (Math.abs(nowMs / 1000 - ts) > toleranceS) return false;
  const expected = Buffer.from(signature(secret, ts, body));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
