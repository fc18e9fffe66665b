/**
 * The bounded pack walk against packs git itself makes: every object stored as git reads it (deltas included), a
 * 200 MiB blob skipped by its header without being held, malformed packs refused, and the limits on object count.
 */
import { describe, expect, it } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_LIMITS, deadline } from "../../../../src/modules/gitsync/repo/limits";
import { readBounded } from "../../../../src/modules/gitsync/repo/objects";
import { ingestPack, readSkipped } from "../../../../src/modules/gitsync/repo/pack-ingest";
import { tempDir } from "../../../helpers/tmp";

const git = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-C", dir, ...args], {
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    maxBuffer: 64 * 1024 * 1024,
  });

/** A repository with a history worth deltas, and a pack of everything in it. */
function source(extra?: (dir: string) => void) {
  const dir = tempDir();
  git(dir, "init", "-q", "-b", "main");
  git(dir, "config", "user.email", "t@example.com");
  git(dir, "config", "user.name", "t");
  mkdirSync(join(dir, "blog"));
  const text = Array.from({ length: 400 }, (_, i) => `line ${i} of a compose file that changes a little\n`).join("");
  for (let v = 0; v < 5; v++) {
    writeFileSync(join(dir, "blog", "docker-compose.yml"), `${text}version: ${v}\n`);
    writeFileSync(join(dir, "blog", ".env"), `V=${v}\n`);
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", `v${v}`);
  }
  extra?.(dir);
  const objects = git(dir, "rev-list", "--objects", "--all")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" ")[0]);
  const pack = execFileSync("git", ["-C", dir, "pack-objects", "--stdout", "--delta-base-offset"], {
    input: `${objects.join("\n")}\n`,
    maxBuffer: 64 * 1024 * 1024,
  });
  const packPath = join(tempDir(), "in.pack");
  writeFileSync(packPath, pack);
  return { dir, objects, packPath };
}

/** An empty git directory to store into (git itself reads it back). */
function target() {
  const dir = tempDir();
  git(dir, "init", "-q", "--bare");
  return dir;
}

const soon = () => deadline(30_000, (what) => new Error(`timed out ${what}`));

describe("ingestPack", () => {
  it("stores every object of a real pack, deltas resolved, as git reads them", async () => {
    const { dir, objects, packPath } = source();
    const into = target();
    const r = await ingestPack(packPath, into, DEFAULT_LIMITS, soon());
    expect(r.skipped).toEqual([]);
    expect(r.stored).toBe(objects.length);
    for (const oid of objects) {
      expect(git(into, "cat-file", "-t", oid)).toBe(git(dir, "cat-file", "-t", oid));
      expect(git(into, "cat-file", "-p", oid)).toBe(git(dir, "cat-file", "-p", oid));
    }
    expect(git(into, "fsck", "--strict", "--no-dangling")).toBe("");
  });

  it("skips a 200 MiB blob by its header, naming its id, and stores the rest", async () => {
    let bigOid = "";
    const { objects, packPath } = source((dir) => {
      const big = join(dir, "blog", "big.bin");
      execFileSync("truncate", ["-s", "200M", big]);
      bigOid = git(dir, "hash-object", "-w", big).trim();
      git(dir, "add", "-A");
      git(dir, "commit", "-q", "-m", "big");
    });
    const into = target();
    const before = process.memoryUsage().rss;
    const r = await ingestPack(packPath, into, DEFAULT_LIMITS, soon());
    const grew = process.memoryUsage().rss - before;
    expect(r.skipped).toEqual([{ oid: bigOid, type: "blob", size: 200 * 1024 * 1024, reason: "200 MiB, over the 1 MiB limit" }]);
    expect(r.stored).toBe(objects.length - 1);
    expect(grew).toBeLessThan(64 * 1024 * 1024);
    expect((await readBounded(into, bigOid, DEFAULT_LIMITS.maxBlobBytes)).kind).toBe("missing");
    expect(readSkipped(into)[bigOid]).toBe("200 MiB, over the 1 MiB limit");
  });

  it("refuses a pack with more objects than the limit, storing nothing", async () => {
    const { packPath } = source();
    const into = target();
    await expect(ingestPack(packPath, into, { ...DEFAULT_LIMITS, maxObjects: 3 }, soon())).rejects.toThrow(
      /more than git_sync.max_objects \(3\)/,
    );
  });

  it("refuses a truncated or corrupted pack", async () => {
    const { packPath } = source();
    const bytes = Bun.file(packPath);
    const whole = new Uint8Array(await bytes.arrayBuffer());
    const cut = join(tempDir(), "cut.pack");
    writeFileSync(cut, whole.subarray(0, whole.length - 100));
    await expect(ingestPack(cut, target(), DEFAULT_LIMITS, soon())).rejects.toThrow(/malformed pack/);
    const bad = join(tempDir(), "bad.pack");
    const flipped = whole.slice();
    flipped[7] = 9;
    writeFileSync(bad, flipped);
    await expect(ingestPack(bad, target(), DEFAULT_LIMITS, soon())).rejects.toThrow(/version 9/);
  });

  it("stops at its deadline", async () => {
    const { packPath } = source();
    const past = deadline(-1, (what) => new Error(`timed out ${what}`));
    await expect(ingestPack(packPath, target(), DEFAULT_LIMITS, past)).rejects.toThrow(/timed out reading the pack/);
  });
});
