/**
 * Commit-graph questions answered by walking parents with isomorphic-git: how many commits each side has that the
 * other lacks (as `git rev-list --left-right --count` does: newest first, stopping once every walk is shared).
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
  // stop once every queued commit is reachable from both sides: all older ones are shared too
  while (queue.some((o) => flags.get(o) !== (LEFT | RIGHT))) {
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
