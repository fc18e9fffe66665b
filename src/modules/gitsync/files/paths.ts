/**
 * What git sync may ever commit, relative to apps_dir: `<slug>/docker-compose.yml`, `<slug>/.env`, `<slug>/sundeck.yml`,
 * `_global.yml` and `.gitignore`. The predicate is the gate; the generated .gitignore only keeps `git status` quiet.
 */
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isSlug } from "../../../shared/slug";
import { COMPOSE_FILE, ENV_FILE } from "../../apps/files";

export const SIDECAR_FILE = "sundeck.yml";
export const GLOBAL_FILE = "_global.yml";
export const GITIGNORE_FILE = ".gitignore";
/** The files of an app directory that are committed. */
export const APP_FILES: readonly string[] = [COMPOSE_FILE, ENV_FILE, SIDECAR_FILE];
const ROOT_FILES: readonly string[] = [GITIGNORE_FILE, GLOBAL_FILE];

/**
 * Whether a repository path (forward slashes, relative to apps_dir) names a committable file: exact names only, a
 * valid slug as the one directory, no `.`/`..`/empty segment, no backslash, no case variant.
 */
export function allowed(path: unknown): boolean {
  if (typeof path !== "string" || path.length === 0 || path.length > 200) return false;
  if (path.includes("\\") || path.includes("\0")) return false;
  const parts = path.split("/");
  if (parts.length === 1) return ROOT_FILES.includes(parts[0]);
  return parts.length === 2 && isSlug(parts[0]) && APP_FILES.includes(parts[1]);
}

/**
 * `allowed`, and on disk under `root` a plain file in a plain directory: no symlink anywhere on the way (lstat), and
 * no hard link (a second name could be the database or a key).
 */
export function allowedOnDisk(root: string, path: string): boolean {
  if (!allowed(path)) return false;
  const parts = path.split("/");
  try {
    if (parts.length === 2 && !lstatSync(join(root, parts[0])).isDirectory()) return false;
    const st = lstatSync(join(root, ...parts));
    return st.isFile() && st.nlink === 1;
  } catch {
    return false;
  }
}

/** Every committable file present under `root`, sorted: what a sync stages (and nothing else). */
export function listCommittable(root: string): string[] {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  for (const e of readdirSync(root, { withFileTypes: true })) {
    if (e.isDirectory() && isSlug(e.name)) {
      for (const f of APP_FILES) if (allowedOnDisk(root, `${e.name}/${f}`)) out.push(`${e.name}/${f}`);
    } else if (ROOT_FILES.includes(e.name) && allowedOnDisk(root, e.name)) out.push(e.name);
  }
  return out.sort();
}

/**
 * Scan a tree (a clone of the remote, or the work tree) for every entry that is not a committable file: returns
 * their paths, sorted. `.git` at the top is skipped. A symlink is reported and not followed.
 */
export function scanTree(root: string): string[] {
  const bad: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (p === ".git") continue;
      if (e.isDirectory()) walk(join(dir, e.name), p);
      else if (!allowedOnDisk(root, p)) bad.push(p);
    }
  };
  walk(root, "");
  return bad.sort();
}
