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
/** Commits read between two turns of the event loop (the reverse proxy shares it; a read does not yield). */
const YIELD_EVERY = 256;
const yieldLoop = () => new Promise<void>((r) => setImmediate(r));

/**
 * Commits by committer time, newest first, equal times in the order they came (as a stable sort of the whole queue
 * gave, which cost a sort per step: a commit with 20,000 parents held the event loop for 5 s).
 */
class NewestFirst {
  private heap: Array<{ oid: string; time: number; seq: number }> = [];
  private seq = 0;
  get size() {
    return this.heap.length;
  }
  push(oid: string, time: number) {
    const h = this.heap;
    h.push({ oid, time, seq: this.seq++ });
    for (let i = h.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (!this.before(i, up)) break;
      [h[i], h[up]] = [h[up]!, h[i]!];
      i = up;
    }
  }
  pop(): string {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.before(l, m)) m = l;
        if (r < h.length && this.before(r, m)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top.oid;
  }
  private before(a: number, b: number): boolean {
    const x = this.heap[a]!;
    const y = this.heap[b]!;
    return x.time !== y.time ? x.time > y.time : x.seq < y.seq;
  }
}

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
  const queue = new NewestFirst();
  let reads = 0;
  const mark = async (oid: string, f: number) => {
    const before = flags.get(oid) ?? 0;
    if ((before | f) === before) return;
    // a history longer than max_objects is counted as far as that (a remote's could grow past it over many fetches)
    if (!before && flags.size >= limits.maxObjects) return;
    if (++reads % YIELD_EVERY === 0) await yieldLoop();
    await load(oid);
    flags.set(oid, before | f);
    queue.push(oid, time.get(oid)!);
  };
  if (left) await mark(left, LEFT);
  if (right) await mark(right, RIGHT);
  // a commit is queued again whenever its marks grow (at most twice), so this ends; newest first keeps that rare
  while (queue.size > 0) {
    const oid = queue.pop();
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
  let reads = 0;
  const read = async (oid: string) => {
    if (++reads % YIELD_EVERY === 0) await yieldLoop();
    return readCommitInfo(paths.gitdir, oid, limits);
  };
  const inLeft = new Set<string>();
  for (const queue = [left]; queue.length; ) {
    const oid = queue.pop()!;
    if (inLeft.has(oid) || inLeft.size > limits.maxObjects) continue;
    inLeft.add(oid);
    for (const p of (await read(oid))?.parents ?? []) queue.push(p);
  }
  const seen = new Set<string>();
  const parentsOf = new Map<string, string[]>();
  const frontier = new NewestFirst();
  const push = async (oid: string) => {
    if (seen.has(oid) || seen.size > limits.maxObjects) return;
    seen.add(oid);
    const c = await read(oid);
    parentsOf.set(oid, c?.parents ?? []);
    frontier.push(oid, c?.time ?? 0);
  };
  await push(right);
  while (frontier.size) {
    const oid = frontier.pop();
    if (inLeft.has(oid)) return oid;
    for (const p of parentsOf.get(oid)!) await push(p);
    parentsOf.delete(oid);
  }
  return null;
}
