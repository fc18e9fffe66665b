/** App files: slug directories with a compose file, private compose and .env writes, recovery from the journal. */
import { describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { contentHash, createAppFiles } from "../../../../src/modules/apps/files";
import { tempDir } from "../../../helpers/tmp";

const setup = () => {
  const root = tempDir();
  return { root, files: createAppFiles(join(root, "apps"), join(root, "data")) };
};

describe("app files", () => {
  it("lists only slug-named directories holding a compose file", () => {
    const { root, files } = setup();
    for (const d of ["blog", "shop", "Bad_Name", "no-compose"]) mkdirSync(join(root, "apps", d), { recursive: true });
    for (const d of ["blog", "shop", "Bad_Name"]) writeFileSync(join(root, "apps", d, "docker-compose.yml"), "services: {}\n");
    writeFileSync(join(root, "apps", "stray.yml"), "x");
    expect(files.list()).toEqual(["blog", "shop"]);
  });

  it("writes compose and .env privately, and reads them back with their content hash", () => {
    const { root, files } = setup();
    const w = files.write("blog", "services: {}\n", "A=1\n");
    expect(statSync(join(root, "apps", "blog", ".env")).mode & 0o777).toBe(0o600);
    const r = files.read("blog")!;
    expect(r).toEqual({ compose: "services: {}\n", env: "A=1\n", hash: w.hash });
    expect(r.hash).toBe(contentHash("services: {}\n", "A=1\n"));
    expect(contentHash("a", "b")).not.toBe(contentHash("ab", ""));
    expect(files.read("missing")).toBeNull();
  });

  it("finishes a pair of writes a crash interrupted, from the journal", () => {
    const { root, files } = setup();
    files.write("blog", "old\n", "OLD=1\n");
    // a crash after the journal and the .env, before the compose file
    mkdirSync(join(root, "data", "pending-writes"), { recursive: true });
    writeFileSync(
      join(root, "data", "pending-writes", "blog.json"),
      JSON.stringify({ slug: "blog", compose: "new\n", env: "NEW=1\n" }),
    );
    writeFileSync(join(root, "apps", "blog", ".env"), "NEW=1\n");
    expect(files.recover()).toEqual(["blog"]);
    expect(readFileSync(join(root, "apps", "blog", "docker-compose.yml"), "utf8")).toBe("new\n");
    expect(existsSync(join(root, "data", "pending-writes", "blog.json"))).toBe(false);
    expect(files.recover()).toEqual([]);
  });

  it("ignores a torn journal, leaving the old files", () => {
    const { root, files } = setup();
    files.write("blog", "old\n", "");
    writeFileSync(join(root, "data", "pending-writes", "blog.json"), '{"slug":"blog","comp');
    expect(files.recover()).toEqual([]);
    expect(files.read("blog")!.compose).toBe("old\n");
  });
});
