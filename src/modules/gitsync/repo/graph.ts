/**
 * Commit-graph questions answered by walking parents with isomorphic-git: how many commits each side has that the
 * other lacks (as `git rev-list --left-right --count` does). The walk goes newest first and carries each side's mark
 * down to every ancestor until nothing changes: it does not stop early on timestamps, since commits made within
 * the same second (or on machines whose clocks disagree) do not come in a trustworthy order, and an early stop then
 * left a shared ancestor counted on one side only.
 */
import { gitFs as fs, loadGit, type RepoPaths } from "./igit";

const LEFT = 1;
const RIGHT = 2;

/** Commits only in `left`'s history and only in `right`'s; either side may be null (no commits). */
export async function aheadBehind(
  paths: RepoPaths,
  left: string | null,
  right: string | null,
): Promise<{ ahead: number; behind: number }> {
  const git = await loadGit();
  const flags = new Map<string, number>();
  const time = new Map<string, number>();
  const parents = new Map<string, string[]>();
  const load = async (oid: string) => {
    if (time.has(oid)) return;
    const { commit } = await git.readCommit({ fs, gitdir: paths.gitdir, oid });
    time.set(oid, commit.committer.timestamp);
    parents.set(oid, commit.parent);
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
