/**
 * History walks against a hostile remote's commits: an octopus of 20,000 parents (under the 4 MiB object cap), a long
 * linear history, and a history longer than max_objects. Every walk reads commits synchronously from disk, and the
 * reverse proxy shares the event loop: an HTTP request in this process must never wait long while one runs. Before,
 * the octopus held the event loop for 5 s in the ahead/behind count (a sort of the queue per commit), and the merge
 * base's frontier was sorted the same way.
 */
import { describe, expect, it } from "bun:test";
import { aheadBehind, mergeBase } from "../../../../src/modules/gitsync/repo/graph";
import { DEFAULT_LIMITS } from "../../../../src/modules/gitsync/repo/limits";
import { ancestors } from "../../../../src/modules/gitsync/repo/send-pack";
import { bareDir, ioStall, objectWriter, within } from "./attack-fixture";

/** The longest an HTTP request may wait on the event loop while a walk runs. */
const STALL_MS = 500;

async function octopus(n: number) {
  const gitdir = bareDir();
  const w = objectWriter(gitdir);
  const tree = await w.tree([]);
  const roots: string[] = [];
  for (let i = 0; i < n; i++) roots.push(await w.commit(tree, [], 1_700_000_000 + i));
  const tip = await w.commit(tree, roots, 1_800_000_000);
  const unrelated = await w.commit(await w.tree([{ mode: "100644", name: "x", oid: await w.blob("x") }]), [], 1_600_000_000);
  return { gitdir, tip, unrelated, paths: { dir: gitdir, gitdir } };
}

async function linear(n: number) {
  const gitdir = bareDir();
  const w = objectWriter(gitdir);
  const tree = await w.tree([]);
  let tip = await w.commit(tree, [], 1_700_000_000);
  for (let i = 1; i < n; i++) tip = await w.commit(tree, [tip], 1_700_000_000 + i);
  return { gitdir, tip, paths: { dir: gitdir, gitdir } };
}

describe("an octopus of 20,000 parents", () => {
  it("is counted without holding the event loop", async () => {
    const o = await octopus(20_000);
    const r = await ioStall(() => aheadBehind(o.paths, o.unrelated, o.tip, DEFAULT_LIMITS));
    expect(r.result).toEqual({ ahead: 1, behind: 20_001 });
    expect(r.stallMs).toBeLessThan(STALL_MS);
  });

  it("has its merge base with an unrelated history looked for without holding the event loop", async () => {
    const o = await octopus(20_000);
    const r = await ioStall(() => mergeBase(o.paths, o.unrelated, o.tip, DEFAULT_LIMITS));
    expect(r.result).toBeNull();
    expect(r.stallMs).toBeLessThan(STALL_MS);
    // and a root of the octopus is found as the base of a history that holds it
    const root = await ioStall(() => mergeBase(o.paths, o.tip, o.tip, DEFAULT_LIMITS));
    expect(root.result).toBe(o.tip);
  });
});

describe("a linear history of 30,000 commits", () => {
  it("is walked by the count, the merge base and the push without holding the event loop", async () => {
    const h = await linear(30_000);
    const count = await ioStall(() => aheadBehind(h.paths, null, h.tip, DEFAULT_LIMITS));
    expect(count.result).toEqual({ ahead: 0, behind: 30_000 });
    expect(count.stallMs).toBeLessThan(STALL_MS);
    const base = await ioStall(() => mergeBase(h.paths, h.tip, h.tip, DEFAULT_LIMITS));
    expect(base.result).toBe(h.tip);
    const push = await ioStall(() => ancestors(h.gitdir, h.tip, DEFAULT_LIMITS, within()));
    expect(push.result.size).toBe(30_000);
    expect(push.stallMs).toBeLessThan(STALL_MS);
  });

  it("is counted only as far as max_objects commits (a remote's history can grow past it over many fetches)", async () => {
    const h = await linear(3_000);
    const limits = { ...DEFAULT_LIMITS, maxObjects: 1_000 };
    expect(await aheadBehind(h.paths, null, h.tip, limits)).toEqual({ ahead: 0, behind: 1_000 });
  });
});
