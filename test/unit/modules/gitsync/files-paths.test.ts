/** What git sync may commit: the path predicate, its on-disk check (symlinks, hard links), and the tree scan. */
import { describe, expect, it } from "bun:test";
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { allowed, allowedOnDisk, listCommittable, scanTree } from "../../../../src/modules/gitsync/files/paths";
import { tempDir } from "../../../helpers/tmp";

describe("allowed", () => {
  it.each([
    "web/docker-compose.yml",
    "web/.env",
    "web/sundeck.yml",
    "db-1/docker-compose.yml",
    "_global.yml",
    ".gitignore",
    `${"a".repeat(63)}/.env`,
  ])("admits %s", (p) => expect(allowed(p)).toBe(true));

  it.each([
    "",
    "sundeck.db",
    "web/.env.bak",
    "web/data.db",
    "web/sub/docker-compose.yml",
    "web/docker-compose.yaml",
    "web/Docker-Compose.yml",
    "web/.ENV",
    "Web/docker-compose.yml",
    "WEB/.env",
    "web-/.env",
    "-web/.env",
    "we--b/.env",
    "we_b/.env",
    `${"a".repeat(64)}/.env`,
    "sub/_global.yml",
    "web/_global.yml",
    "web/.gitignore",
    "_global.yml/x",
    "./web/.env",
    "web/./.env",
    "../web/.env",
    "web/../_global.yml",
    "/web/.env",
    "web//.env",
    "web/.env/",
    "web\\.env",
    "web/.env\0",
    "web/.env ",
    ".git/config",
    ".gitignore/x",
  ])("refuses %j", (p) => expect(allowed(p)).toBe(false));

  it("refuses what is not a string", () => {
    for (const v of [null, undefined, 1, ["web/.env"], { toString: () => "web/.env" }]) expect(allowed(v)).toBe(false);
  });
});

describe("on disk", () => {
  const tree = () => {
    const root = tempDir();
    mkdirSync(join(root, "web"));
    writeFileSync(join(root, "web", "docker-compose.yml"), "services: {}\n");
    writeFileSync(join(root, "_global.yml"), "version: 1\n");
    writeFileSync(join(root, "sundeck.db"), "SQLite format 3\0");
    return root;
  };

  it("admits plain files only", () => {
    const root = tree();
    expect(allowedOnDisk(root, "web/docker-compose.yml")).toBe(true);
    expect(allowedOnDisk(root, "_global.yml")).toBe(true);
    expect(allowedOnDisk(root, "web/.env")).toBe(false);
  });

  it("refuses a symlinked file, a symlinked app directory and a hard link", () => {
    const root = tree();
    symlinkSync(join(root, "sundeck.db"), join(root, "web", ".env"));
    expect(allowedOnDisk(root, "web/.env")).toBe(false);
    symlinkSync(join(root, "web"), join(root, "api"));
    expect(allowedOnDisk(root, "api/docker-compose.yml")).toBe(false);
    linkSync(join(root, "sundeck.db"), join(root, "web", "sundeck.yml"));
    expect(allowedOnDisk(root, "web/sundeck.yml")).toBe(false);
    mkdirSync(join(root, "db"));
    mkdirSync(join(root, "db", ".env"));
    expect(allowedOnDisk(root, "db/.env")).toBe(false);
    expect(listCommittable(root)).toEqual(["_global.yml", "web/docker-compose.yml"]);
    expect(scanTree(root)).toEqual(["api", "sundeck.db", "web/.env", "web/sundeck.yml"]);
  });

  it("scans nested decoys and skips .git", () => {
    const root = tree();
    mkdirSync(join(root, ".git"));
    writeFileSync(join(root, ".git", "config"), "");
    mkdirSync(join(root, "web", "data"), { recursive: true });
    writeFileSync(join(root, "web", "data", ".env"), "");
    expect(scanTree(root)).toEqual(["sundeck.db", "web/data/.env"]);
  });
});
