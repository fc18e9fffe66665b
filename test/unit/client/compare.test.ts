/** Comparing local app files with the server's: which files differ, env by content, values masked. */
import { describe, expect, it } from "bun:test";
import { relative } from "node:path";
import { appDiff, changes, type ServerApp } from "../../../src/client/compare";
import type { LocalApp } from "../../../src/client/local";

const compose = "services:\n  web:\n    image: x\n";
const server: ServerApp = { slug: "blog", compose, env: { A: "1", B: "secret" } };
const local = (over: Partial<LocalApp> = {}): LocalApp => ({
  slug: "blog",
  composePath: "/tmp/apps/blog/docker-compose.yml",
  compose,
  envPath: "/tmp/apps/blog/.env",
  env: { A: "1", B: "secret" },
  ...over,
});

describe("changes", () => {
  it("names the files that differ", () => {
    expect(changes(local(), server)).toEqual([]);
    expect(changes(local({ compose: `${compose}# x\n` }), server)).toEqual(["compose"]);
    expect(changes(local({ env: { A: "1", B: "other" } }), server)).toEqual(["env"]);
  });

  it("does not compare env when the app has no local .env (the server keeps its own)", () => {
    expect(changes(local({ env: null, envPath: null }), server)).toEqual([]);
  });

  it("compares env by content, not by formatting", () => {
    expect(changes(local({ env: { A: "1", B: "secret" } }), { ...server, env: { A: "1", B: "secret" } })).toEqual([]);
    expect(changes(local({ env: { B: "secret", A: "1" } }), server)).toEqual(["env"]);
  });
});

describe("appDiff", () => {
  it("masks env values and says which side a changed one is from", () => {
    const d = appDiff(local({ env: { A: "1", B: "changed", C: "" } }), server);
    // the local side is named relative to the working directory, wherever the tests run from
    expect(d.startsWith(`--- server/blog/.env\n+++ ${relative(process.cwd(), "/tmp/apps/blog/.env")}\n`)).toBe(true);
    expect(d.slice(d.indexOf("@@"))).toBe("@@ -1,2 +1,3 @@\n A=***\n-B=*** (server)\n+B=*** (local)\n+C=\n");
    expect(d).not.toContain("secret");
  });

  it("shows values when asked", () => {
    expect(appDiff(local({ env: { A: "1", B: "changed" } }), server, { showValues: true })).toContain("-B=secret\n+B=changed\n");
  });

  it("is empty when nothing differs", () => {
    expect(appDiff(local(), server)).toBe("");
  });
});
