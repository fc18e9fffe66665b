/** The CLI's line diff: minimal edit scripts (checked on random input) and unified diffs patch applies. */
import { describe, expect, it } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { diffLines, splitLines, unifiedDiff } from "../../../src/client/diff";
import { tempDir } from "../../helpers/tmp";

const names = { old: "a/file", new: "b/file" };

/** Length of the longest common subsequence, by dynamic programming: the reference for minimality. */
function lcs(a: string[], b: string[]): number {
  const row = new Array(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    let prev = 0;
    for (let j = 1; j <= b.length; j++) {
      const keep = row[j];
      row[j] = a[i - 1] === b[j - 1] ? prev + 1 : Math.max(row[j], row[j - 1]);
      prev = keep;
    }
  }
  return row[b.length];
}

/** A deterministic pseudo-random generator, so failures reproduce. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomText(r: () => number, lines: number): string {
  const words = ["a", "b", "c", "services:", "  web:", "    image: x", ""];
  let t = "";
  for (let i = 0; i < lines; i++) t += `${words[Math.floor(r() * words.length)]}\n`;
  return r() < 0.2 ? t.replace(/\n$/, "") : t;
}

function mutate(r: () => number, text: string): string {
  const lines = text.split("\n");
  const n = Math.floor(r() * 5);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (lines.length + 1));
    const what = r();
    if (what < 0.4) lines.splice(at, 1);
    else if (what < 0.8) lines.splice(at, 0, `new ${Math.floor(r() * 10)}`);
    else lines[at] = `changed ${i}`;
  }
  return lines.join("\n");
}

/** Apply a unified diff with patch(1) and return the result. */
async function patched(oldText: string, diff: string): Promise<string> {
  const dir = tempDir();
  const file = join(dir, "file");
  writeFileSync(file, oldText);
  writeFileSync(join(dir, "p.diff"), diff);
  const p = Bun.spawn(["patch", "-s", "-p1", "-i", join(dir, "p.diff"), file], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  const code = await p.exited;
  if (code !== 0) throw new Error(`patch failed (${code}): ${await new Response(p.stderr).text()}\n${diff}`);
  return Bun.file(file).text();
}

describe("splitLines", () => {
  it("keeps each line's newline and a bare last line", () => {
    expect(splitLines("")).toEqual([]);
    expect(splitLines("a\nb\n")).toEqual(["a\n", "b\n"]);
    expect(splitLines("a\nb")).toEqual(["a\n", "b"]);
    expect(splitLines("\n")).toEqual(["\n"]);
  });
});

describe("diffLines", () => {
  it("keeps common lines and finds a minimal edit script", () => {
    const a = ["a", "b", "c", "a", "b", "b", "a"];
    const b = ["c", "b", "a", "b", "a", "c"];
    const edits = diffLines(a, b);
    expect(edits.filter((e) => e.op === " ").length).toBe(lcs(a, b));
    expect(edits.filter((e) => e.op !== "+").map((e) => e.text)).toEqual(a);
    expect(edits.filter((e) => e.op !== "-").map((e) => e.text)).toEqual(b);
  });

  it("handles empty sides", () => {
    expect(diffLines([], ["x"])).toEqual([{ op: "+", text: "x" }]);
    expect(diffLines(["x"], [])).toEqual([{ op: "-", text: "x" }]);
    expect(diffLines([], [])).toEqual([]);
  });

  it("is minimal on random inputs", () => {
    const r = rng(7);
    for (let i = 0; i < 200; i++) {
      const a = splitLines(randomText(r, Math.floor(r() * 30)));
      const b = splitLines(mutate(r, a.join("")));
      const edits = diffLines(a, b);
      expect(edits.filter((e) => e.op === " ").length).toBe(lcs(a, b));
      expect(edits.filter((e) => e.op !== "-").map((e) => e.text)).toEqual(b);
    }
  });
});

describe("unifiedDiff", () => {
  it("is empty for equal texts", () => {
    expect(unifiedDiff("a\nb\n", "a\nb\n", names)).toBe("");
  });

  it("writes headers and a hunk with three lines of context", () => {
    const old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    const now = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
    expect(unifiedDiff(old, now, names)).toBe("--- a/file\n+++ b/file\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
  });

  it("splits distant changes into hunks and merges near ones", () => {
    const old = Array.from({ length: 20 }, (_, i) => `${i + 1}\n`).join("");
    const far = old.replace("2\n", "two\n").replace("18\n", "eighteen\n");
    expect(unifiedDiff(old, far, names).match(/^@@/gm)).toHaveLength(2);
    const near = old.replace("5\n", "five\n").replace("11\n", "eleven\n");
    expect(unifiedDiff(old, near, names).match(/^@@/gm)).toHaveLength(1);
  });

  it("marks a missing newline at end of file and counts empty ranges as diff(1) does", () => {
    expect(unifiedDiff("a\n", "a", names)).toBe("--- a/file\n+++ b/file\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n");
    expect(unifiedDiff("", "x\ny\n", names)).toBe("--- a/file\n+++ b/file\n@@ -0,0 +1,2 @@\n+x\n+y\n");
    expect(unifiedDiff("x\n", "", names)).toBe("--- a/file\n+++ b/file\n@@ -1 +0,0 @@\n-x\n");
  });

  it("produces patches that patch(1) applies exactly", async () => {
    const r = rng(42);
    for (let i = 0; i < 60; i++) {
      const a = randomText(r, Math.floor(r() * 40));
      const b = mutate(r, a);
      const d = unifiedDiff(a, b, names);
      if (a === b) expect(d).toBe("");
      else expect(await patched(a, d)).toBe(b);
    }
  });
});
