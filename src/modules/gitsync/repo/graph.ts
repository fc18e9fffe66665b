/**
 * Commit-graph questions answered by walking parents with isomorphic-git: how many commits each side has that the
 * other lacks (as `git rev-list --left-right --count` does). The walk goes newest first and carries each side's mark
 * down to every ancestor until nothing changes: it does not stop early on timestamps, since commits made within
 * the same second (or on machines whose clocks disagree) do not come in a trustworthy order, and an early stop then
 * left a shared ancestor counted on one side only.
 */
import type { RepoPaths } from "./igit";
import type { GitLimits } from "./limits";
import { readCommitInfo } from "./tree-walk";

const LEFT = 1;
const RIGHT = 2;

/**
 * Commits only in `left`'s history and only in `right`'s; either side may be null (no commits). Commits are read
 * within the limits: one that is missing or malformed (a remote's, skipped by the fetch) ends its line there.
 */
export async function aheadBehind(
  paths: RepoPaths,
  left: string | null,
  right: string | null,
  limits: GitLimits,
): Promise<{ ahead: number; behind: number }> {
  const flags = new Map<string, number>();
  const time = new Map<string, number>();
  const parents = new Map<string, string[]>();
  const load = async (oid: string) => {
    if (time.has(oid)) return;
    const c = await readCommitInfo(paths.gitdir, oid, limits);
    time.set(oid, c?.time ?? 0);
    parents.set(oid, c?.parents ?? []);
  };
  const queue: string[] = [];
  const mark = async (oid: string, f: number) => {
    await load(oid);
    const before = flags.get(oid) ?? 0;
    if ((before | f) === before) return;
    flags.set(oid, before | f);
    queue.push(oid);
  };
  if (left) await mark(left, LEFT);
  if (right) await mark(right, RIGHT);
  // a commit is queued again whenever its marks grow (at most twice), so this ends; newest first keeps that rare
  while (queue.length > 0) {
    queue.sort((a, b) => time.get(b)! - time.get(a)!);
    const oid = queue.shift()!;
    for (const p of parents.get(oid)!) await mark(p, flags.get(oid)!);
  }
  let ahead = 0;
  let behind = 0;
  for (const f of flags.values()) {
    if (f === LEFT) ahead++;
    else if (f === RIGHT) behind++;
  }
  return { ahead, behind };
}

/**
 * The merge base of two commits: the newest commit of `right`'s history (by committer time) that is also in `left`'s,
 * read within the limits, never through the library's parser. Null when the histories share nothing (or either side
 * is null). For the linear histories a config repository has this is git's answer.
 */
export async function mergeBase(paths: RepoPaths, left: string | null, right: string | null, limits: GitLimits) {
  if (!left || !right) return null;
  const inLeft = new Set<string>();
  for (const queue = [left]; queue.length; ) {
    const oid = queue.pop()!;
    if (inLeft.has(oid) || inLeft.size > limits.maxObjects) continue;
    inLeft.add(oid);
    queue.push(...((await readCommitInfo(paths.gitdir, oid, limits))?.parents ?? []));
  }
  const seen = new Set<string>();
  const frontier: Array<{ oid: string; time: number }> = [];
  const push = async (oid: string) => {
    if (seen.has(oid) || seen.size > limits.maxObjects) return;
    seen.add(oid);
    frontier.push({ oid, time: (await readCommitInfo(paths.gitdir, oid, limits))?.time ?? 0 });
  };
  await push(right);
  while (frontier.length) {
    frontier.sort((a, b) => b.time - a.time);
    const { oid } = frontier.shift()!;
    if (inLeft.has(oid)) return oid;
    for (const p of (await readCommitInfo(paths.gitdir, oid, limits))?.parents ?? []) await push(p);
  }
  return null;
}
