/**
 * A template's variables turned into the app's `.env`: given values checked by type, defaults filled in, secrets left
 * empty generated here (crypto.getRandomValues, at least 128 bits), every domain variable a host of its own. Values go
 * to the .env only: the compose file reads `${KEY}`. A bad or missing value is a 400 naming every variable at fault.
 */
import { badRequest } from "../../lib/errors";
import type { SecretCharset, TemplateVariable } from "../../shared/templates";

const CHARSETS: Record<SecretCharset, string> = {
  hex: "0123456789abcdef",
  alphanum: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
  base58: "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
};

/** The least entropy a generated secret has, in bits. */
export const MIN_SECRET_BITS = 128;

/** How a secret without a `generate` of its own is made. */
const DEFAULT_GENERATE = { length: 32, charset: "alphanum" as const };

/** Characters needed for `bits` of entropy from `charset`. */
export const lengthFor = (bits: number, charset: SecretCharset) => Math.ceil(bits / Math.log2(CHARSETS[charset].length));

/** A random string from `charset`, unbiased (bytes past the largest multiple of the alphabet are drawn again). */
export function generateSecret(length: number, charset: SecretCharset): string {
  const alphabet = CHARSETS[charset];
  const n = Math.max(length, lengthFor(MIN_SECRET_BITS, charset));
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  const buf = new Uint8Array(n * 2);
  while (out.length < n) {
    crypto.getRandomValues(buf);
    for (const b of buf) {
      if (b >= limit) continue;
      out += alphabet[b % alphabet.length];
      if (out.length === n) break;
    }
  }
  return out;
}

const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const EMAIL = /^[^\s@]{1,64}@[a-z0-9.-]{1,253}\.[a-z]{2,}$/i;
const NUMBER = /^-?\d{1,15}(\.\d{1,15})?$/;
/** Nothing a .env line or a terminal would misread: printable, no line breaks. */
const PRINTABLE = /^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/;

export const isHost = (s: string) => HOST.test(s);

/** Check `given` against the variables and fill in the rest: the `.env` map, and the keys that were generated. */
export function resolveVariables(
  variables: readonly TemplateVariable[],
  given: Record<string, unknown> = {},
): { env: Record<string, string>; generated: string[] } {
  const problems: string[] = [];
  const known = new Set(variables.map((v) => v.key));
  for (const k of Object.keys(given)) if (!known.has(k)) problems.push(`${k} is not a variable of this template`);
  const env: Record<string, string> = {};
  const generated: string[] = [];
  const hosts = new Map<string, string>();
  for (const v of variables) {
    const raw = given[v.key];
    if (raw !== undefined && typeof raw !== "string") {
      problems.push(`${v.key} must be a string`);
      continue;
    }
    let value = (raw ?? "").trim();
    if (!value && v.type === "secret") {
      const g = v.generate ?? DEFAULT_GENERATE;
      env[v.key] = generateSecret(g.length, g.charset);
      generated.push(v.key);
      continue;
    }
    if (!value) value = v.default ?? "";
    if (!value) {
      if (v.required) problems.push(`${v.key} (${v.label}) is required`);
      else env[v.key] = "";
      continue;
    }
    if (value.length > 4096 || !PRINTABLE.test(value)) {
      problems.push(`${v.key} must be one line of printable text of at most 4096 characters`);
      continue;
    }
    if (v.type === "domain") {
      value = value.toLowerCase();
      if (!isHost(value)) problems.push(`${v.key} must be a host name such as app.example.com`);
      else if (hosts.has(value)) problems.push(`${v.key} is the same host as ${hosts.get(value)}: each domain needs its own`);
      else hosts.set(value, v.key);
    }
    if (v.type === "email" && !EMAIL.test(value)) problems.push(`${v.key} must be an email address`);
    if (v.type === "number" && !NUMBER.test(value)) problems.push(`${v.key} must be a number`);
    if (v.type === "secret" && value.length < 8)
      problems.push(`${v.key} must be at least 8 characters (or empty to generate one)`);
    env[v.key] = value;
  }
  if (problems.length) throw badRequest(`template variables: ${problems.join("; ")}`);
  return { env, generated };
}
