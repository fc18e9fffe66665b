/**
 * Work-tree paths: which relative paths are acceptable at all (before the caller's `allowed` policy is asked), a
 * bounded scan of the work tree, and writes that never follow a symlink out of it. A hostile remote can put any name
 * in a tree (`../x`, `.git/hooks/…`, a symlink); none of those is ever written to disk.
 */
import { lstatSync, mkdirSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeFileAtomic } from "../../../lib/fs";

/** A repository-relative path with plain components only: no `..`, `.`, `.git`, absolute path, backslash or control. */
export function isSafePath(p: string): boolean {
  if (!p || p.length > 4096 || p.startsWith("/") || p.endsWith("/")) return false;
  if (/[\u0000-\u001f\u007f\\]/.test(p)) return false;
  return p.split("/").every((c) => c !== "" && c !== "." && c !== ".." && c.toLowerCase() !== ".git");
}

/** Regular files under `dir`, at most `maxDepth` components deep, relative with `/`; symlinks and `.git` skipped. */
export function scanFiles(dir: string, maxDepth: number, skip: string): string[] {
  const out: string[] = [];
  const skipAbs = resolve(skip);
  const walk = (abs: string, rel: string, depth: number) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const childAbs = join(abs, e.name);
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.name === ".git" || resolve(childAbs) === skipAbs) continue;
      if (e.isFile()) out.push(childRel);
      else if (e.isDirectory() && depth < maxDepth) walk(childAbs, childRel, depth + 1);
    }
  };
  walk(dir, "", 1);
  return out.sort();
}

/** What is at `rel` in the work tree: a regular file with one link (and its exec bit), nothing, or something else. */
export function lstatRel(dir: string, rel: string): { kind: "file"; exec: boolean; mode: number } | { kind: "none" | "other" } {
  let parent = dir;
  const parts = rel.split("/");
  for (const part of parts.slice(0, -1)) {
    parent = join(parent, part);
    try {
      if (!lstatSync(parent).isDirectory()) return { kind: "other" };
    } catch {
      return { kind: "none" };
    }
  }
  try {
    const st = lstatSync(join(dir, rel));
    // a second name for a file could be the database or a key: only a file with one name is ours to read
    if (!st.isFile() || st.nlink !== 1) return { kind: "other" };
    return { kind: "file", exec: (st.mode & 0o100) !== 0, mode: st.mode & 0o777 };
  } catch {
    return { kind: "none" };
  }
}

/** Write `content` at `rel`, creating plain directories; refuses when a component is a symlink or not a directory. */
export function writeRel(dir: string, rel: string, content: Uint8Array, exec: boolean): void {
  const parts = rel.split("/");
  let parent = dir;
  for (const part of parts.slice(0, -1)) {
    parent = join(parent, part);
    try {
      if (!lstatSync(parent).isDirectory()) throw new Error(`${rel}: a parent is not a directory`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
      mkdirSync(parent, { mode: 0o700 });
    }
  }
  const st = lstatRel(dir, rel);
  if (st.kind === "other") throw new Error(`${rel}: not a regular file`);
  // keep an existing file's permissions; new files are private (an .env holds secrets)
  const mode = st.kind === "file" ? st.mode : 0o600;
  writeFileAtomic(join(dir, rel), content, exec ? mode | 0o100 : mode & ~0o111);
}

/** Remove the regular file at `rel` and any directories it leaves empty (never `dir` itself). */
export function removeRel(dir: string, rel: string): void {
  if (lstatRel(dir, rel).kind !== "file") return;
  unlinkSync(join(dir, rel));
  const parts = rel.split("/").slice(0, -1);
  while (parts.length) {
    try {
      rmdirSync(join(dir, ...parts));
    } catch {
      return;
    }
    parts.pop();
  }
}
