/**
 * The host path rule shared by every path a compose file can name (bind mounts, env files, build contexts, secret
 * files, extended files): stay inside the app directory, or stay clear of the host's sensitive paths. Symlinks of
 * existing components are followed, so a link inside the app pointing at /etc is judged as /etc.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { SafetyPolicy } from "./model";

/** Host paths no container may see, with what to call them in messages. */
const SYSTEM_PATHS = [
  "/",
  "/etc",
  "/proc",
  "/sys",
  "/dev",
  "/run",
  "/var/run",
  "/var/lib/docker",
  "/root",
  "/boot",
  "/lib/modules",
  "/var/run/docker.sock",
  "/run/docker.sock",
];

interface Protected {
  path: string;
  label: string;
}

/** The path rule prepared for one app: its directory and the protected host paths, as written and as resolved. */
export interface HostPathRule {
  appDir: string;
  appDirReal: string;
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

/** Prepare the path rule for an app from its safety policy. */
export function hostPathRule(policy: SafetyPolicy): HostPathRule {
  const entries: Protected[] = [
    { path: resolve(policy.dataDir), label: "the sundeck data directory" },
    { path: resolve(policy.appsDir), label: "the apps directory" },
    ...SYSTEM_PATHS.filter((p) => p.endsWith(".sock")).map((p) => ({ path: p, label: "the docker socket" })),
    ...SYSTEM_PATHS.filter((p) => !p.endsWith(".sock")).map((p) => ({ path: p, label: p })),
  ];
  const protectedPaths: Protected[] = [];
  for (const e of entries) {
    protectedPaths.push(e);
    const real = resolveLinks(e.path);
    if (real && real !== e.path) protectedPaths.push({ path: real, label: e.label });
  }
  const appDir = resolve(policy.appDir);
  return { appDir, appDirReal: resolveLinks(appDir) ?? appDir, protectedPaths };
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
 * `baseDir` (the directory of the file naming them) and must not leave the app directory; `~` is refused outright.
 */
export function hostPathProblem(raw: string, baseDir: string, rule: HostPathRule): string | null {
  if (raw.includes("\0")) return "path contains a NUL byte";
  if (raw.startsWith("~")) return "home directory paths are not allowed";
  const abs = resolve(baseDir, raw);
  if (!isAbsolute(raw) && !isInside(abs, rule.appDir)) return "path escapes the app directory";
  const real = resolveLinks(abs);
  if (real === null) return "path has too many symbolic links";
  if (isInside(real, rule.appDirReal)) return null;
  if (!isAbsolute(raw)) {
    const why = protectedProblem(real, rule);
    return why ? `path resolves through a symbolic link to a protected path (${why})` : null;
  }
  return protectedProblem(abs, rule) ?? protectedProblem(real, rule);
}
