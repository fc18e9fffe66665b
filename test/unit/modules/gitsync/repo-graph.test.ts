/**
 * Ahead and behind counts on real repositories made by the git binary, with every commit in the same second (as on
 * a fast machine or in CI): a shared ancestor must count on neither side.
 */
import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { aheadBehind } from "../../../../src/modules/gitsync/repo/graph";
import { DEFAULT_LIMITS } from "../../../../src/modules/gitsync/repo/limits";
import { tempDir } from "../../../helpers/tmp";

const SAME_SECOND = "2026-11-27T06:00:00Z";

function repoWith(): { dir: string; commit: (msg: string) => string; checkout: (ref: string) => void } {
  const dir = join(tempDir("sundeck-graph-"), "r");
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@example.test",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@example.test",
    GIT_AUTHOR_DATE: SAME_SECOND,
    GIT_COMMITTER_DATE: SAME_SECOND,
  };
  const git = (...args: string[]) => {
    const r = Bun.spawnSync(["git", ...args], { cwd: dir, env });
    if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
    return r.stdout.toString().trim();
  };
  Bun.spawnSync(["git", "init", "-q", "--initial-branch=main", dir], { env });
  return {
    dir,
    commit: (msg) => {
      git("commit", "-q", "--allow-empty", "-m", msg);
      return git("rev-parse", "HEAD");
    },
    checkout: (ref) => {
      git("checkout", "-q", ref);
    },
  };
}

describe("aheadBehind", () => {
  it("counts a remote commit on top of ours as behind 1, ahead 0, when every commit has the same time", async () => {
    const r = repoWith();
    r.commit("first");
    const ours = r.commit("ours");
    const theirs = r.commit("theirs on top");
    const paths = { dir: r.dir, gitdir: join(r.dir, ".git") };
    expect(await aheadBehind(paths, ours, theirs, DEFAULT_LIMITS)).toEqual({ ahead: 0, behind: 1 });
    expect(await aheadBehind(paths, theirs, ours, DEFAULT_LIMITS)).toEqual({ ahead: 1, behind: 0 });
  });

  it("counts both sides of a fork in the same second, the shared history on neither", async () => {
    const r = repoWith();
    r.commit("a");
    const base = r.commit("b");
    const left = r.commit("left 1");
    const left2 = r.commit("left 2");
    r.checkout(base);
    const right = r.commit("right 1");
    const paths = { dir: r.dir, gitdir: join(r.dir, ".git") };
    expect(left).not.toBe(right);
    expect(await aheadBehind(paths, left2, right, DEFAULT_LIMITS)).toEqual({ ahead: 2, behind: 1 });
    expect(await aheadBehind(paths, null, right, DEFAULT_LIMITS)).toEqual({ ahead: 0, behind: 3 });
    expect(await aheadBehind(paths, base, base, DEFAULT_LIMITS)).toEqual({ ahead: 0, behind: 0 });
  });
});
