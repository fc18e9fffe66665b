/** Readers for single `sundeck.*` label values; each throws a ComposeError naming the label it could not read. */
import { parseDuration } from "../lib/duration";
import { parseCidr } from "../lib/net";
import { ComposeError, type Endpoint } from "./model";

const DNS_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TLS_MODES = new Set(["auto", "custom", "local", "off"]);
const REGISTRY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A bad value for a label, as the error the deploy answers with. */
export function badLabel(service: string, label: string, why: string): ComposeError {
  return new ComposeError(service, "label", `label ${label}: ${why}`);
}

/** Whether a host name is a valid DNS name (lower case), optionally with a `*.` wildcard first label. */
export function isValidHost(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  const labels = host.split(".");
  if (labels[0] === "*") labels.shift();
  return labels.length > 0 && labels.every((l) => DNS_LABEL.test(l));
}

/** Comma-separated hosts, lower-cased and validated. */
export function readHosts(service: string, label: string, value: string): string[] {
  const hosts = value
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  if (hosts.length === 0) throw badLabel(service, label, "needs at least one host");
  for (const h of hosts)
    if (!isValidHost(h)) throw badLabel(service, label, `${JSON.stringify(h.slice(0, 80))} is not a valid host name`);
  return [...new Set(hosts)];
}

/** A TCP port number in 1-65535. */
export function readPort(service: string, label: string, value: string): number {
  const n = /^\d{1,5}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!(n >= 1 && n <= 65535)) throw badLabel(service, label, `${JSON.stringify(value.slice(0, 20))} is not a port in 1-65535`);
  return n;
}

/** Why a (trimmed) path prefix is refused, or null: it starts with `/`, no spaces, query, fragment or `..`. */
export function pathProblem(p: string): string | null {
  if (!p.startsWith("/")) return "must start with /";
  if (/[\s?#\\]/.test(p) || p.includes("//") || p.split("/").some((s) => s === ".." || s === ".")) {
    return `${JSON.stringify(p.slice(0, 80))} is not a valid path prefix`;
  }
  return null;
}

/** A path prefix (see pathProblem); a trailing slash is dropped. */
export function readPath(service: string, label: string, value: string): string {
  const p = value.trim();
  const problem = pathProblem(p);
  if (problem) throw badLabel(service, label, problem);
  return p.length > 1 ? p.replace(/\/$/, "") : p;
}

/** One of auto, custom, local, off. */
export function readTls(service: string, label: string, value: string): Endpoint["tls"] {
  const v = value.trim().toLowerCase();
  if (!TLS_MODES.has(v)) throw badLabel(service, label, "must be auto, custom, local or off");
  return v as Endpoint["tls"];
}

/** A whole number, at least `min`. */
export function readCount(service: string, label: string, value: string, min: number): number {
  const v = value.trim();
  const n = /^\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!(n >= min) || !Number.isSafeInteger(n)) throw badLabel(service, label, `must be a whole number of at least ${min}`);
  return n;
}

/** A positive duration in Go or day format (`60s`, `1m`, `1d`), kept as written. */
export function readWindow(service: string, label: string, value: string): string {
  const ms = parseDuration(value);
  if (ms === null || ms <= 0) throw badLabel(service, label, "must be a positive duration such as 60s or 1m");
  return value.trim();
}

/** `ip`, `path` or `header:<name>`. */
export function readRateKey(service: string, label: string, value: string): string {
  const v = value.trim();
  if (v === "ip" || v === "path" || /^header:[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(v)) return v;
  throw badLabel(service, label, "must be ip, path or header:<name>");
}

/** IP addresses and CIDRs separated by commas or spaces. */
export function readAllow(service: string, label: string, value: string): string[] {
  const entries = value.split(/[\s,]+/).filter(Boolean);
  if (entries.length === 0) throw badLabel(service, label, "needs at least one address or cidr");
  for (const e of entries) {
    if (!parseCidr(e)) throw badLabel(service, label, `${JSON.stringify(e.slice(0, 60))} is not an ip address or cidr`);
  }
  return entries;
}

/** Registry names separated by commas, or `none` for no registry at all. */
export function readRegistries(service: string, label: string, value: string): string[] {
  const names = value
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length === 1 && names[0].toLowerCase() === "none") return [];
  if (names.length === 0) throw badLabel(service, label, "needs registry names or none");
  for (const n of names) {
    if (n.toLowerCase() === "none") throw badLabel(service, label, "none cannot be combined with registry names");
    if (!REGISTRY_NAME.test(n)) throw badLabel(service, label, `${JSON.stringify(n.slice(0, 60))} is not a registry name`);
  }
  return names;
}
