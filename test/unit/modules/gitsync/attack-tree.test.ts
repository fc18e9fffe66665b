/**
 * Our own tree walk, and the pull on top of it, against trees and commits written as a hostile pusher writes them:
 * odd modes, names with control characters, invalid UTF-8 (an overlong `..`), repeated names, `.git` variants,
 * symlinks and submodules at allowed paths, trees and commits pointing at blobs, a commit with 10,000 parents. And
 * the three that cost unbounded memory before: a 4 MB directory name over 10,000 entries, a tree of 10,000 `..`
 * under 10,000 names, and a chain of long names.
 */
import { describe, expect, it } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { allowed } from "../../../../src/modules/gitsync/files/paths";
import { DEFAULT_LIMITS } from "../../../../src/modules/gitsync/repo/limits";
import { openRepo } from "../../../../src/modules/gitsync/repo/repo";
import { MAX_REFUSALS, readCommitInfo, walkCommit } from "../../../../src/modules/gitsync/repo/tree-walk";
import { tempDir } from "../../../helpers/tmp";
import { bareDir, objectWriter, rssMiB, type TreeEntry, within } from "./attack-fixture";

/** A git directory with a writer, and a walk of a commit of `root`'s entries. */
async function walkOf(entries: (w: ReturnType<typeof objectWriter>) => Promise<TreeEntry[]>) {
  const gitdir = bareDir();
  const w = objectWriter(gitdir);
  const commit = await w.commit(await w.tree(await entries(w)));
  Bun.gc(true);
  const before = rssMiB();
  const walk = await walkCommit(gitdir, commit, DEFAULT_LIMITS, within());
  return { walk, grewMiB: rssMiB() - before, gitdir, commit };
}

describe("the walk of a hostile tree", () => {
  it("reads odd but well-formed modes as they are, and refuses a tree with a malformed one whole", async () => {
    const { walk } = await walkOf(async (w) => {
      const b = await w.blob("x\n");
      return [
        { mode: "100664", name: "a", oid: b },
        { mode: "040000", name: "d", oid: await w.tree([{ mode: "100644", name: "f", oid: b }]) },
        // "40000  x": the mode ends at the first space, the name starts with a space
        { mode: "40000", name: " sp", oid: await w.tree([{ mode: "100644", name: "g", oid: b }]) },
      ];
    });
    expect(walk.problem).toBeNull();
    expect([...walk.tree]).toEqual(
      expect.arrayContaining([
        ["a", { oid: expect.any(String), mode: "100664" }],
        ["d/f", { oid: expect.any(String), mode: "100644" }],
        [" sp/g", { oid: expect.any(String), mode: "100644" }],
      ]),
    );
    for (const mode of ["0", "10064x", "1000000", ""]) {
      const bad = await walkOf(async (w) => [{ mode, name: "a", oid: await w.blob("x") }]);
      expect(bad.walk.problem).toBe("the tree at the root is malformed");
      expect(bad.walk.tree.size).toBe(0);
    }
  });

  it("skips control characters, repeated names and .git in any case; invalid UTF-8 never decodes to `..`", async () => {
    const { walk } = await walkOf(async (w) => {
      const b = await w.blob("x\n");
      return [
        { mode: "100644", name: "a\nb", oid: b },
        { mode: "100644", name: "esc\u001b[2J", oid: b },
        { mode: "100644", name: "twice", oid: b },
        { mode: "100644", name: "twice", oid: await w.blob("second\n") },
        { mode: "40000", name: ".GIT", oid: await w.tree([{ mode: "100644", name: "config", oid: b }]) },
        { mode: "40000", name: ".gIt", oid: await w.tree([{ mode: "100644", name: "HEAD", oid: b }]) },
        { mode: "100644", name: ".git ", oid: b },
        { mode: "100644", name: ".git.", oid: b },
        // an overlong `..` (C0 AE C0 AE) and a lone continuation byte
        {
          mode: "40000",
          name: Buffer.from([0xc0, 0xae, 0xc0, 0xae]),
          oid: await w.tree([{ mode: "100644", name: "x", oid: b }]),
        },
        { mode: "100644", name: Buffer.from([0x80]), oid: b },
      ];
    });
    expect(walk.problem).toBeNull();
    expect(walk.refusals).toEqual([
      { path: "a\\x0ab", reason: "skipped: a name with control characters" },
      { path: "esc\\x1b[2J", reason: "skipped: a name with control characters" },
      { path: "twice", reason: "skipped: a name given twice in one tree" },
      { path: ".GIT", reason: "skipped: a .git entry" },
      { path: ".gIt", reason: "skipped: a .git entry" },
    ]);
    const paths = [...walk.tree.keys()];
    expect(paths).toContain("twice");
    // harmless on Linux (another name than .git), and outside the policy: never written
    expect(paths).toEqual(expect.arrayContaining([".git ", ".git."]));
    expect(paths.some((p) => p.split("/").includes(".."))).toBe(false);
    expect(paths).toContain("\ufffd\ufffd\ufffd\ufffd/x");
    for (const p of paths) expect(allowed(p)).toBe(false);
  });

  it("leaves a commit unjudged when a directory entry, or the commit's tree, is a blob", async () => {
    const dirIsBlob = await walkOf(async (w) => [{ mode: "40000", name: "web", oid: await w.blob("not a tree") }]);
    expect(dirIsBlob.walk.problem).toBe("the tree at web is missing");
    const gitdir = bareDir();
    const w = objectWriter(gitdir);
    const commit = await w.commit(await w.blob("a blob for a tree"));
    const walk = await walkCommit(gitdir, commit, DEFAULT_LIMITS, within());
    expect(walk.problem).toBe("the tree at the root is missing");
    const notACommit = await walkCommit(gitdir, await w.blob("a blob for a commit"), DEFAULT_LIMITS, within());
    expect(notACommit.problem).toMatch(/^commit [0-9a-f]{12} is missing, too big or malformed$/);
  });

  it("reads a commit with 10,000 parents (under the object cap) as it is", async () => {
    const gitdir = bareDir();
    const w = objectWriter(gitdir);
    const parents = Array.from({ length: 10_000 }, (_, i) => i.toString(16).padStart(40, "0"));
    const commit = await w.commit(await w.tree([]), parents);
    const info = await readCommitInfo(gitdir, commit, DEFAULT_LIMITS);
    expect(info?.parents).toHaveLength(10_000);
  });
});

describe("the memory of a walk", () => {
  it("skips a 4 MB directory name instead of making 10,000 paths of 4 MB (40 GB) from it", async () => {
    const { walk, grewMiB } = await walkOf(async (w) => {
      const b = await w.blob("x\n");
      const inner = await w.tree(Array.from({ length: 10_000 }, (_, i) => ({ mode: "100644", name: `f${i}`, oid: b })));
      return [{ mode: "40000", name: "A".repeat(4_000_000), oid: inner }];
    });
    expect(walk.problem).toBeNull();
    expect(walk.tree.size).toBe(0);
    expect(walk.refusals).toEqual([{ path: `${"A".repeat(200)}…`, reason: "skipped: a name longer than 255 bytes" }]);
    expect(grewMiB).toBeLessThan(64);
  });

  it("lists at most MAX_REFUSALS skipped entries: 10,000 names over a tree of 10,000 `..` is not 10^8 refusals", async () => {
    const { walk, grewMiB } = await walkOf(async (w) => {
      const b = await w.blob("x\n");
      const dots = await w.tree(Array.from({ length: 10_000 }, () => ({ mode: "100644", name: "..", oid: b })));
      return Array.from({ length: 10_000 }, (_, i) => ({ mode: "40000", name: `d${i}`, oid: dots }));
    });
    expect(walk.problem).toBe("the commit names more than 100000 paths (git_sync.max_paths): a tree bomb, or far too big");
    expect(walk.refusals).toHaveLength(MAX_REFUSALS + 1);
    expect(walk.refusals.at(-1)?.reason).toMatch(/^skipped: \d+ more entries with unsafe or repeated names$/);
    expect(grewMiB).toBeLessThan(64);
  });

  it("stops a chain of 255-byte names (4 KB paths, 100,000 of them) at a budget of characters", async () => {
    const { walk, grewMiB } = await walkOf(async (w) => {
      const b = await w.blob("x\n");
      const long = (i: number) => `${i}`.padEnd(255, "n");
      let level = await w.tree(Array.from({ length: 10_000 }, (_, i) => ({ mode: "100644", name: long(i), oid: b })));
      for (let d = 0; d < 14; d++) level = await w.tree([{ mode: "40000", name: long(d), oid: level }]);
      return Array.from({ length: 10 }, (_, i) => ({ mode: "40000", name: long(i), oid: level }));
    });
    expect(grewMiB).toBeLessThan(64);
    expect(walk.problem).toBe("the commit's paths are longer than 8388608 characters in all: a tree bomb, or far too big");
  });
});

/** A repository over a fresh apps dir whose tracking branch is a commit of `entries` (nothing fetched: written here). */
async function pulled(
  entries: (w: ReturnType<typeof objectWriter>) => Promise<TreeEntry[]>,
  prepare?: (apps: string) => void,
  onVet?: () => void,
) {
  const root = tempDir("sundeck-attack-pull-");
  const apps = join(root, "apps");
  const gitDir = join(root, "git");
  mkdirSync(apps);
  prepare?.(apps);
  const repo = await openRepo({
    workTree: apps,
    gitDir,
    remote: "http://127.0.0.1:9/never.git",
    auth: { kind: "none" },
    allowed,
  });
  const w = objectWriter(gitDir);
  const commit = await w.commit(await w.tree(await entries(w)));
  mkdirSync(join(gitDir, "refs", "remotes", "origin"), { recursive: true });
  writeFileSync(join(gitDir, "refs", "remotes", "origin", "main"), `${commit}\n`);
  const vet = async () => {
    onVet?.();
    return [];
  };
  return { apps, r: await repo.pullLocalWins({ deadline: within(), vet }) };
}

describe("a pull of a hostile commit", () => {
  const app = async (w: ReturnType<typeof objectWriter>, files: TreeEntry[]) => ({
    mode: "40000",
    name: "web",
    oid: await w.tree(files),
  });

  it("writes no symlink, submodule or odd-mode entry at an allowed path, and applies the plain file beside them", async () => {
    const { apps, r } = await pulled(async (w) => [
      await app(w, [
        { mode: "120000", name: "docker-compose.yml", oid: await w.blob("/etc/passwd") },
        { mode: "160000", name: ".env", oid: "1".repeat(40) },
        { mode: "100664", name: "sundeck.yml", oid: await w.blob("alerts: []\n") },
      ]),
      { mode: "100644", name: "_global.yml", oid: await w.blob("users: []\n") },
    ]);
    expect(r.ignored.sort()).toEqual(["web/.env", "web/docker-compose.yml", "web/sundeck.yml"]);
    expect(r.applied).toEqual(["_global.yml"]);
    expect(existsSync(join(apps, "web"))).toBe(false);
    expect(readFileSync(join(apps, "_global.yml"), "utf8")).toBe("users: []\n");
  });

  it("holds at most 16 MiB of incoming files: 300 apps with a 1 MiB .env each keep their local content past it", async () => {
    const before = { rss: 0, peak: 0 };
    const { apps, r } = await pulled(
      async (w) => {
        const out: TreeEntry[] = [];
        for (let i = 0; i < 300; i++) {
          const env = Buffer.alloc(1024 * 1024 - 16, 0x41);
          env.write(`K${i}=`);
          out.push({
            mode: "40000",
            name: `app${i}`,
            oid: await w.tree([{ mode: "100644", name: ".env", oid: await w.blob(env) }]),
          });
        }
        Bun.gc(true);
        before.rss = before.peak = rssMiB();
        return out;
      },
      undefined,
      () => (before.peak = Math.max(before.peak, rssMiB())),
    );
    expect(r.applied).toHaveLength(16);
    expect(existsSync(join(apps, "app16", ".env"))).toBe(false);
    const kept = r.skipped.filter((s) => s.reason.startsWith("the pull already holds"));
    expect(kept).toHaveLength(284);
    expect(kept[0]?.reason).toMatch(
      /^the pull already holds 16 MiB of incoming files, its limit \(16 MiB in all\): local content kept$/,
    );
    expect(Math.max(before.peak, rssMiB()) - before.rss).toBeLessThan(64);
  });

  it("never writes through a symlink planted in apps_dir", async () => {
    const outside = tempDir("sundeck-attack-outside-");
    const attempt = pulled(
      async (w) => [await app(w, [{ mode: "100644", name: "docker-compose.yml", oid: await w.blob("services: {}\n") }])],
      (apps) => symlinkSync(outside, join(apps, "web")),
    );
    await attempt.catch(() => {});
    expect(existsSync(join(outside, "docker-compose.yml"))).toBe(false);
    expect(lstatSync(join(outside)).isDirectory()).toBe(true);
  });
});
