/**
 * Session tokens: HS256 JWTs (through @elysiajs/jwt) with fixed issuer and audience, 24 h lifetime and the user's
 * token version in claim `tv`. The cookie is `session`, HttpOnly, SameSite=Strict (Lax when TLS is off).
 */
import { jwt } from "@elysiajs/jwt";

export const COOKIE = "session";
export const ISSUER = "sundeck";
export const AUDIENCE = "sundeck-dashboard";
export const SESSION_SECONDS = 24 * 60 * 60;

export interface SessionClaims {
  sub: string;
  tv: number;
}

/** Build the signer/verifier over a derived key. */
export function createSessions(key: Uint8Array) {
  const signer = jwt({ name: "jwt", secret: key, alg: "HS256", iss: ISSUER, aud: AUDIENCE, exp: `${SESSION_SECONDS}s` }).decorator
    .jwt;
  return {
    sign: (userId: number, tokenVersion: number): Promise<string> => signer.sign({ sub: String(userId), tv: tokenVersion }),
    /** The claims of a valid token, or null (bad signature, expired, wrong issuer/audience/algorithm). */
    async verify(token: string): Promise<SessionClaims | null> {
      const claims = await signer.verify(token, { issuer: ISSUER, audience: AUDIENCE, algorithms: ["HS256"] });
      if (!claims || typeof claims.sub !== "string" || typeof claims.tv !== "number") return null;
      return { sub: claims.sub, tv: claims.tv };
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;

/** The Set-Cookie value for a new session or (token null) for clearing it. */
export function sessionCookie(token: string | null, opts: { tlsOff: boolean; secure: boolean }): string {
  const parts = [
    `${COOKIE}=${token ?? ""}`,
    "Path=/",
    "HttpOnly",
    `SameSite=${opts.tlsOff ? "Lax" : "Strict"}`,
    `Max-Age=${token ? SESSION_SECONDS : 0}`,
  ];
  if (opts.secure) parts.push("Secure");
  return parts.join("; ");
}

/** The session token from a Cookie header, if any. */
export function readSessionCookie(header: string | null): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eqAt = part.indexOf("=");
    if (eqAt > 0 && part.slice(0, eqAt).trim() === COOKIE) return part.slice(eqAt + 1).trim() || null;
  }
  return null;
}
