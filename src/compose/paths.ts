/**
 * The host path rule shared by every path a compose file can name (bind mounts, env files, build contexts, secret
 * files, extended files): stay inside the app directory, or stay clear of the host's sensitive paths. Symlinks of
 * existing components are followed, so a link inside the app pointing at /etc is judged as /etc.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { SafetyPolicy } from "./model";
import { composeHostPath } from "./volume-spec";

/**
 * Host paths no container may see even when an entry of `compose.allowed_host_paths` covers them: the docker socket,
 * the kernel's interfaces, the container runtimes' state, and the root (which contains them all). The data and apps directories are added per app.
 */
const ALWAYS_PROTECTED = [
  "/",
  "/proc",
  "/sys",
  "/dev",
  "/var/run/docker.sock",
  "/run/docker.sock",
  "/var/lib/docker",
  "/var/lib/containerd",
];
interface Protected {
  path: string;
  label: string;
}

/**
 * The path rule prepared for one app: its directory, the host paths the server config allows besides it, and the
 * paths that stay protected regardless, each as written and as resolved.
 */
export interface HostPathRule {
  appDir: string;
  appDirReal: string;
  allowed: string[];
  protectedPaths: Protected[];
}

const MAX_LINKS = 40;

/**
 * Follow symlinks of the existing components of an absolute, normalised path; components that do not exist are
 * kept as written. Returns null on a symlink loop.
 */
export function resolveLinks(abs: string): string | null {
  let parts = abs.split("/").filter(Boolean);
  let cur = "/";
  let hops = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === ".") continue;
    if (part === "..") {
      cur = resolve(cur, "..");
      continue;
    }
    const next = join(cur, part);
    let isLink: boolean;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch {
      return resolve(next, ...parts.slice(i + 1));
    }
    if (!isLink) {
      cur = next;
      continue;
    }
    if (++hops > MAX_LINKS) return null;
    let target: string;
    try {
      target = readlinkSync(next);
    } catch {
      // unreadable (e.g. /proc/1/root): judge the rest as written
      return resolve(next, ...parts.slice(i + 1));
    }
    const base = isAbsolute(target) ? [] : cur.split("/").filter(Boolean);
    parts = [...base, ...target.split("/").filter(Boolean), ...parts.slice(i + 1)];
    cur = "/";
    i = -1;
  }
  return cur;
}

/** Whether `p` is `dir` or lies below it. */
export function isInside(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir === "/" ? "/" : `${dir}/`);
}

/** A path and, when symlinks lead elsewhere, where they lead. */
function withReal(p: string): string[] {
  const real = resolveLinks(p);
  return real && real !== p ? [p, real] : [p];
}

/** Prepare the path rule for an app from its safety policy. */
export function hostPathRule(policy: SafetyPolicy): HostPathRule {
  const entries: Protected[] = [
    { path: resolve(policy.dataDir), label: "the sundeck data directory" },
    { path: resolve(policy.appsDir), label: "the apps directory" },
    ...ALWAYS_PROTECTED.map((p) => ({ path: p, label: p.endsWith(".sock") ? "the docker socket" : p })),
  ];
  const protectedPaths = entries.flatMap((e) => withReal(e.path).map((path) => ({ path, label: e.label })));
  const allowed = (policy.allowedHostPaths ?? []).filter((p) => isAbsolute(p)).flatMap((p) => withReal(resolve(p)));
  const appDir = resolve(policy.appDir);
  return { appDir, appDirReal: resolveLinks(appDir) ?? appDir, allowed, protectedPaths };
}

function protectedProblem(p: string, rule: HostPathRule): string | null {
  const all = rule.protectedPaths;
  const exact = all.find((e) => e.path === p);
  if (exact) return `host path is ${exact.label}`;
  // the closest enclosing protected path names the problem best (`/run`, not `/`)
  const parents = all.filter((e) => e.path !== "/" && isInside(p, e.path)).sort((a, b) => b.path.length - a.path.length);
  if (parents.length) return `host path sits under ${parents[0].label}`;
  const child = all.find((e) => isInside(e.path, p));
  return child ? `host path contains ${child.label}` : null;
}

/**
 * Why a host path named in the compose file may not be used, or null when it may. Relative paths resolve against
 * `baseDir` (the directory of the file naming them) and must stay in the app directory. Anything else must sit under
 * an entry of `compose.allowed_host_paths`, as written and once symlinks are followed, and clear of the protected
 * paths (docker socket, data and apps directories, /proc, /sys, /dev).
 */
export function hostPathProblem(raw: string, baseDir: string, rule: HostPathRule): string | null {
  // where compose v2 puts it (relative joined to baseDir, cleaned), or why it has no place on a Linux host
  const where = composeHostPath(raw, baseDir);
  if ("refused" in where) return where.refused;
  const abs = where.path;
  if (!isAbsolute(raw) && !isInside(abs, rule.appDir)) return "path escapes the app directory";
  const real = resolveLinks(abs);
  if (real === null) return "path has too many symbolic links";
  const inApp = isInside(abs, rule.appDir);
  if (inApp && isInside(real, rule.appDirReal)) return null;
  const outside = [inApp ? null : abs, isInside(real, rule.appDirReal) ? null : real].filter((p) => p !== null);
  for (const p of outside) {
    const why = protectedProblem(p, rule);
    if (why) return p === abs ? why : `path resolves through a symbolic link to a protected path (${why})`;
  }
  for (const p of outside) {
    if (rule.allowed.some((a) => isInside(p, a))) continue;
    return p === abs || !inApp
      ? "host path is outside the app directory and not under compose.allowed_host_paths"
      : "path resolves through a symbolic link to outside the app directory";
  }
  return null;
}
