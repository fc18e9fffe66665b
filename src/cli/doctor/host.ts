/**
 * Doctor checks of the host: the domain's DNS, certificates on disk, free disk space, the clock, the data and apps
 * directories, and the config itself. Thresholds (docs/doctor.md):
 * - disk: fail under 2 % or 512 MiB free, warn under 10 % or 2 GiB;
 * - certificates: fail when one has expired, warn when one expires within 14 days;
 * - clock: compared with the Date header of an HTTP answer (1 s resolution), warn beyond 2 s, fail beyond 60 s
 *   (ACME, TLS validity windows and session expiry go wrong first).
 */

import { lookup } from "node:dns/promises";
import {
  accessSync,
  constants,
  existsSync,
  readdirSync,
  readFileSync,
  statfsSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { networkInterfaces } from "node:os";
import { dirname, join } from "node:path";
import type { Config } from "../../config/schema";
import { certMeta } from "../../proxy/certs/store";
import { type CheckResult, fail, humanBytes, ok, oneLine, PROBE_TIMEOUT_MS, warn } from "./check";

const DAY = 86_400_000;
export const CERT_WARN_DAYS = 14;
export const DISK_FAIL = { ratio: 0.02, bytes: 512 * 1024 ** 2 };
export const DISK_WARN = { ratio: 0.1, bytes: 2 * 1024 ** 3 };
export const CLOCK_WARN_MS = 2000;
export const CLOCK_FAIL_MS = 60_000;

/** The closest existing path at or above `path`. */
function existingAncestor(path: string): string {
  let p = path;
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  return p;
}

/** Whether `path` is (or can become) a directory this user writes to: a real write when it exists. */
export function writableCheck(name: string, path: string): CheckResult {
  if (existsSync(path)) {
    if (!statSync(path).isDirectory()) return fail(name, `${path} is not a directory`);
    const probe = join(path, `.sundeck-doctor-${process.pid}`);
    try {
      writeFileSync(probe, "");
      unlinkSync(probe);
      return ok(name, `${path} is writable`);
    } catch (e) {
      return fail(name, `${path} is not writable: ${(e as NodeJS.ErrnoException).code ?? oneLine(e)}`);
    }
  }
  const base = existingAncestor(path);
  if (!statSync(base).isDirectory()) return fail(name, `${path} cannot be created: ${base} is not a directory`);
  try {
    accessSync(base, constants.W_OK | constants.X_OK);
  } catch {
    return fail(name, `${path} cannot be created: ${base} is not writable`);
  }
  return ok(name, `${path} does not exist yet; sundeck serve creates it`);
}

/** Free space on the filesystem holding `path`. */
export function diskCheck(name: string, path: string): CheckResult {
  let s: ReturnType<typeof statfsSync>;
  try {
    s = statfsSync(existingAncestor(path));
  } catch (e) {
    return warn(name, `${path}: cannot read free space (${(e as NodeJS.ErrnoException).code ?? oneLine(e)})`);
  }
  const free = s.bavail * s.bsize;
  const ratio = s.blocks ? s.bavail / s.blocks : 0;
  const text = `${path}: ${humanBytes(free)} free (${(ratio * 100).toFixed(1)} %)`;
  if (ratio < DISK_FAIL.ratio || free < DISK_FAIL.bytes) return fail(name, `${text}: free some space`);
  if (ratio < DISK_WARN.ratio || free < DISK_WARN.bytes) return warn(name, `${text}: running low`);
  return ok(name, text);
}

/** Every address of this host's interfaces. */
function hostAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.add(a.address);
  return out;
}

/** The domain resolves (A/AAAA, /etc/hosts included) to one of this host's addresses. */
export async function dnsCheck(c: Config): Promise<CheckResult> {
  const name = "dns";
  if (!c.domain) return warn(name, "no domain configured: the dashboard is reached on the management port only");
  let found: string[];
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS / 1000}s`)), PROBE_TIMEOUT_MS);
    });
    found = (await Promise.race([lookup(c.domain, { all: true }), late]).finally(() => clearTimeout(timer))).map(
      (a) => a.address,
    );
  } catch (e) {
    const text = `${c.domain} does not resolve (${(e as NodeJS.ErrnoException).code ?? oneLine(e)})`;
    // without an address no ACME certificate can be issued
    return c.tls.mode === "auto" ? fail(name, `${text}: add an A/AAAA record`) : warn(name, text);
  }
  const mine = hostAddresses();
  const hit = found.filter((a) => mine.has(a));
  if (hit.length) return ok(name, `${c.domain} -> ${found.join(", ")} (this host)`);
  return warn(name, `${c.domain} -> ${found.join(", ")}: none is an address of this host (fine behind NAT forwarding here)`);
}

interface FoundCert {
  label: string;
  notAfter: number;
}

/** The certificates under `<data_dir>/certs`, read without creating anything. */
function certsOnDisk(root: string): FoundCert[] {
  const out: FoundCert[] = [];
  const read = (file: string, label: string) => {
    try {
      out.push({ label, notAfter: certMeta(readFileSync(file, "utf8")).notAfter });
    } catch {
      out.push({ label: `${label} (unreadable)`, notAfter: Number.NaN });
    }
  };
  const dirs = (p: string) => {
    try {
      return readdirSync(p, { withFileTypes: true }).filter((d) => d.isDirectory());
    } catch {
      return [];
    }
  };
  for (const kind of ["acme", "local"]) {
    for (const d of dirs(join(root, kind))) {
      const file = join(root, kind, d.name, "cert.pem");
      if (existsSync(file)) read(file, `${d.name.replace(/^_wildcard\./, "*.")} (${kind})`);
    }
  }
  if (existsSync(join(root, "local", "ca.crt"))) read(join(root, "local", "ca.crt"), "local CA");
  for (const app of dirs(join(root, "custom"))) {
    for (const d of dirs(join(root, "custom", app.name))) {
      const file = join(root, "custom", app.name, d.name, "cert.pem");
      if (existsSync(file)) read(file, `${d.name.replace(/^_wildcard\./, "*.")} (custom, ${app.name})`);
    }
  }
  return out;
}

/** Certificate state from the data dir: expired ones fail, ones within 14 days of expiry warn. */
export function certCheck(c: Config, now = Date.now()): CheckResult {
  const name = "certificates";
  if (c.tls.mode === "off") return ok(name, "tls.mode is off: no certificates in use");
  const certs = certsOnDisk(join(c.data_dir, "certs"));
  const bad = certs.filter((x) => Number.isNaN(x.notAfter));
  if (bad.length) return fail(name, `cannot read ${bad.map((b) => b.label).join(", ")}`);
  const expired = certs.filter((x) => x.notAfter <= now);
  if (expired.length) return fail(name, `expired: ${expired.map((x) => x.label).join(", ")}`);
  const missingDomain =
    c.domain && c.tls.mode === "auto" && !certs.some((x) => x.label.startsWith(`${c.domain} (`))
      ? ` (none for ${c.domain} yet: issued once the server answers on it)`
      : "";
  if (!certs.length) return (missingDomain ? warn : ok)(name, `no certificates yet${missingDomain}`);
  const soonest = certs.reduce((a, b) => (b.notAfter < a.notAfter ? b : a));
  const days = Math.floor((soonest.notAfter - now) / DAY);
  const text = `${certs.length} on disk; soonest expiry in ${days} days: ${soonest.label}${missingDomain}`;
  if (days < CERT_WARN_DAYS) return warn(name, `${text} (renewal should have happened: check the process log)`);
  return (missingDomain ? warn : ok)(name, text);
}

/** Clock skew against the Date header of `url` (the midpoint of the request is compared). */
export async function clockCheck(url: string): Promise<CheckResult> {
  const name = "clock";
  if (!url) return ok(name, "not checked (--time-url is empty)");
  const t0 = Date.now();
  let date: string | null;
  try {
    const res = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: "manual" });
    date = res.headers.get("date");
  } catch (e) {
    return warn(name, `not checked: ${url} did not answer (${oneLine(e)})`);
  }
  const remote = date ? Date.parse(date) : Number.NaN;
  if (Number.isNaN(remote)) return warn(name, `not checked: ${url} sent no Date header`);
  const local = (t0 + Date.now()) / 2;
  // the header has whole seconds: half a second of the difference is rounding
  const skew = Math.max(0, Math.abs(local - (remote + 500)) - 500);
  const text = `${(skew / 1000).toFixed(1)} s ${local > remote ? "ahead of" : "behind"} ${new URL(url).host}`;
  if (skew > CLOCK_FAIL_MS) return fail(name, `${text}: sync the clock (NTP)`);
  if (skew > CLOCK_WARN_MS) return warn(name, `${text}: enable NTP`);
  return ok(name, text);
}

/** Things in the config worth knowing before starting (it loaded, or the whole doctor says why it did not). */
export function configCheck(c: Config, source: string | null): CheckResult {
  const name = "config";
  const where = source ?? "embedded default (no config file)";
  const notes: string[] = [];
  if (source) {
    try {
      if (statSync(source).mode & 0o077) notes.push("the file is readable by other users and holds the master secret: chmod 600");
    } catch {
      // loaded a moment ago: a race with its removal is not worth a line
    }
  }
  if (!c.management_addr || c.management_addr === "0.0.0.0" || c.management_addr === "::") {
    notes.push("the management API listens on every interface");
  }
  if (c.tls.mode === "off" && !/^(127\.|\[::1\]|localhost)/.test(c.listen_addr))
    notes.push("tls.mode is off: apps are served over plain HTTP");
  if (c.git_sync.enabled && c.git_sync.remote.startsWith("http://"))
    notes.push("git_sync.remote is plain http: the token travels unencrypted");
  return notes.length ? warn(name, `${where}: ${notes.join("; ")}`) : ok(name, where);
}
