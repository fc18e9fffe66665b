/**
 * The local half of a repository: refs, the work tree's allowed files, commits built from the policy (the branch's
 * tree with exactly the given allowed paths replaced), and the index kept in step for a person running `git status`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GitSyncError } from "./errors";
import { gitFs as fs, type loadGit, type RepoPaths } from "./igit";
import type { GitLimits } from "./limits";
import { isSafePath, lstatRel, scanFiles } from "./paths";
import { type Entry, type FlatTree, readFlat, sameEntry, writeFlat } from "./trees";
import type { Author } from "./types";

type Git = Awaited<ReturnType<typeof loadGit>>;

/** One repository's local state, for the operations in repo.ts and pull.ts. */
export interface Local {
  git: Git;
  paths: RepoPaths;
  /** `refs/heads/<branch>` */
  ref: string;
  /** `refs/remotes/origin/<branch>` */
  tracking: string;
  allowed: (path: string) => boolean;
  maxDepth: number;
  limits: GitLimits;
}

/** A path the policy admits and that is safe to name. */
export function managed(l: Local, p: string): boolean {
  return isSafePath(p) && l.allowed(p);
}

/** A ref's sha, or null when it does not exist. */
export async function resolveRef(l: Local, ref: string): Promise<string | null> {
  try {
    return await l.git.resolveRef({ fs, gitdir: l.paths.gitdir, ref });
  } catch {
    return null;
  }
}

/** Regular files of the work tree (bounded depth), without the git directory. */
export function workFiles(l: Local): string[] {
  return scanFiles(l.paths.dir, l.maxDepth, l.paths.gitdir);
}

/** The work tree's managed regular files among `candidates`, as a flat tree of blob oids (hashed, not stored). */
export async function readWork(l: Local, candidates: Iterable<string>): Promise<FlatTree> {
  const out: FlatTree = new Map();
  for (const p of candidates) {
    if (!managed(l, p)) continue;
    const st = lstatRel(l.paths.dir, p);
    if (st.kind !== "file") continue;
    const { oid } = await l.git.hashBlob({ object: readFileSync(join(l.paths.dir, p)) });
    out.set(p, { oid, mode: st.exec ? "100755" : "100644" });
  }
  return out;
}

/** Point the index at `tree`'s entries for `changed` paths, so `git status` shows only real edits. */
export async function syncIndex(l: Local, tree: FlatTree, changed: Iterable<string>): Promise<void> {
  for (const p of changed) {
    const e = tree.get(p);
    if (e) await l.git.updateIndex({ fs, ...l.paths, filepath: p, oid: e.oid, mode: Number.parseInt(e.mode, 8), add: true });
    else await l.git.updateIndex({ fs, ...l.paths, filepath: p, remove: true, force: true }).catch(() => {});
  }
}

/**
 * Commit `which` (or every managed file) as the work tree holds it; null when nothing changed. `allowEmpty` makes a
 * root commit even of an empty tree (the first push of an empty apps directory).
 */
export async function commitPaths(
  l: Local,
  which: string[] | "all",
  message: string,
  author: Author,
  allowEmpty = false,
): Promise<string | null> {
  if (which !== "all") {
    const bad = which.find((p) => !managed(l, p));
    if (bad !== undefined) throw new GitSyncError("not_allowed", `${bad} is not a file git sync may commit`);
  }
  const head = await resolveRef(l, l.ref);
  const before = await readFlat(l.paths, head, l.limits);
  const next: FlatTree = new Map(before);
  const changed: string[] = [];
  let candidates = which as string[];
  if (which === "all") {
    candidates = [...new Set([...workFiles(l), ...before.keys()])].filter((p) => managed(l, p));
    // tracked from before the policy changed: "all" means exactly the allowed files
    for (const p of before.keys())
      if (!managed(l, p)) {
        next.delete(p);
        changed.push(p);
      }
  }
  for (const p of candidates) {
    const st = lstatRel(l.paths.dir, p);
    // a symlink, a directory or a hard link where a file belongs: neither read nor taken for a deletion
    if (st.kind === "other") continue;
    let e: Entry | undefined;
    if (st.kind === "file") {
      const oid = await l.git.writeBlob({ fs, gitdir: l.paths.gitdir, blob: readFileSync(join(l.paths.dir, p)) });
      e = { oid, mode: st.exec ? "100755" : "100644" };
    }
    if (sameEntry(e, before.get(p))) continue;
    if (e) next.set(p, e);
    else next.delete(p);
    changed.push(p);
  }
  if (!changed.length && !(allowEmpty && !head)) return null;
  const tree = await writeFlat(l.paths, next);
  const parent = head ? [head] : [];
  const sha = await l.git.commit({ fs, ...l.paths, message, author, committer: author, tree, parent, ref: l.ref });
  await syncIndex(l, next, changed);
  return sha;
}
