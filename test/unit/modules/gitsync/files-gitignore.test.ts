/**
 * The generated .gitignore against the real git: on a tree full of decoys, `git add -A --dry-run` stages exactly
 * the committable files, and `git check-ignore` agrees file by file.
 */
import { describe, expect, it } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { gitignore } from "../../../../src/modules/gitsync/files/gitignore";
import { allowed, listCommittable } from "../../../../src/modules/gitsync/files/paths";
import { tempDir } from "../../../helpers/tmp";

const git = (cwd: string, ...args: string[]) => {
  const r = Bun.spawnSync(["git", ...args], { cwd, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: cwd } });
  return { code: r.exitCode, out: r.stdout.toString() };
};

const WANTED = [
  ".gitignore",
  "_global.yml",
  "web/docker-compose.yml",
  "web/.env",
  "web/sundeck.yml",
  "db-1/docker-compose.yml",
  `${"b".repeat(63)}/.env`,
];
const DECOYS = [
  "sundeck.db",
  "sundeck.db-wal",
  "config.yml",
  "_global.yml.bak",
  ".env",
  "docker-compose.yml",
  "web/.env.bak",
  "web/.env~",
  "web/data.db",
  "web/docker-compose.yml.orig",
  "web/sub/docker-compose.yml",
  "web/sub/.env",
  "web/sub/_global.yml",
  "web/_global.yml",
  "web/.gitignore.bak",
  "web/data/pg/base/1",
  "web/.env.d/secret",
  "web/sundeck.yml.d/x",
  "Web/docker-compose.yml",
  "WEB/.env",
  "-x/.env",
  "x-/.env",
  "a--b/.env",
  "a_b/.env",
  "a.b/.env",
  `${"a".repeat(64)}/.env`,
  "_global.yml.d/_global.yml",
  "sub/_global.yml",
  "z/.env/secret",
  "keys/id_ed25519",
  "logs/sundeck.log",
];

const plant = (root: string, paths: string[]) => {
  for (const p of paths) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), `content of ${p}\n`);
  }
};

describe("generated .gitignore", () => {
  it("is the same bytes every time", () => {
    expect(gitignore()).toBe(gitignore());
    expect(gitignore().endsWith("\n")).toBe(true);
  });

  it("admits exactly the allowed files among decoys (git add -A --dry-run)", () => {
    const root = tempDir();
    expect(git(root, "init", "-q", ".").code).toBe(0);
    plant(root, [...WANTED.filter((p) => p !== ".gitignore"), ...DECOYS]);
    writeFileSync(join(root, ".gitignore"), gitignore());
    for (const p of DECOYS) expect(allowed(p)).toBe(false);
    const r = git(root, "add", "-A", "--dry-run");
    expect(r.code).toBe(0);
    const staged = r.out
      .trim()
      .split("\n")
      .map((l) => l.replace(/^add '(.*)'$/, "$1"))
      .sort();
    expect(staged).toEqual([...WANTED].sort());
    expect(listCommittable(root)).toEqual([...WANTED].sort());
  });

  it("cannot stop an app's own nested .gitignore, which is why a sync stages listCommittable only", () => {
    const root = tempDir();
    git(root, "init", "-q", ".");
    plant(root, ["web/docker-compose.yml", "web/data.db"]);
    writeFileSync(join(root, ".gitignore"), gitignore());
    // a container with a bind mount on its app directory can write this
    writeFileSync(join(root, "web", ".gitignore"), "!*\n");
    expect(git(root, "add", "-A", "--dry-run").out).toContain("add 'web/data.db'");
    expect(listCommittable(root)).toEqual([".gitignore", "web/docker-compose.yml"]);
  });

  it("agrees with git check-ignore on every path", () => {
    const root = tempDir();
    git(root, "init", "-q", ".");
    plant(root, [...WANTED.filter((p) => p !== ".gitignore"), ...DECOYS]);
    writeFileSync(join(root, ".gitignore"), gitignore());
    for (const p of [...WANTED, ...DECOYS]) {
      // exit 0: ignored, 1: not ignored
      const ignored = git(root, "check-ignore", "-q", "--no-index", "--", p).code === 0;
      expect({ p, ignored }).toEqual({ p, ignored: !WANTED.includes(p) });
    }
  });
});
