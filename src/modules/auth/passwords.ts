/** Password hashing (argon2id through Bun.password) and the password rules shared by every route and the CLI. */
import { badRequest } from "../../lib/errors";

export const MIN_PASSWORD = 8;
export const MAX_PASSWORD = 1024;

// OWASP's argon2id floor: 19 MiB, 2 passes. Keeps a login well under 100 ms and memory small.
const PARAMS = { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 } as const;

/** Reject a password that breaks the rules, with a reason safe to show. */
export function checkPassword(pw: unknown, field = "password"): string {
  if (typeof pw !== "string") throw badRequest(`${field} is required`);
  if (pw.length < MIN_PASSWORD) throw badRequest(`${field} must be at least ${MIN_PASSWORD} characters`);
  if (pw.length > MAX_PASSWORD) throw badRequest(`${field} must be at most ${MAX_PASSWORD} characters`);
  return pw;
}

export function hashPassword(pw: string): Promise<string> {
  return Bun.password.hash(pw, PARAMS);
}

export async function verifyPassword(pw: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(pw, hash);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/** Spend the time a real verification would, so unknown users and locked pairs answer like wrong passwords. */
export async function burnVerify(pw: string): Promise<void> {
  dummy ??= hashPassword("sundeck-dummy-password");
  await verifyPassword(pw.slice(0, MAX_PASSWORD), await dummy);
}
