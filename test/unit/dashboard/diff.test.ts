/** The activity snapshot diff (dashboard/diff.ts): fields by dotted path, missing snapshots, line diffs. */
import { describe, expect, it } from "bun:test";
import { diffFields, diffLines } from "../../../src/dashboard/diff";

describe("snapshot diff", () => {
  it("reports added, removed, changed and unchanged fields by dotted path", () => {
    const d = diffFields(
      { name: "web", image: "nginx:1", env: { A: "1", B: "2" }, ports: [80] },
      { name: "web", image: "nginx:2", env: { A: "1", C: "3" }, ports: [80, 443] },
    );
    expect(d).toEqual([
      { path: "name", kind: "same", before: "web", after: "web" },
      { path: "image", kind: "changed", before: "nginx:1", after: "nginx:2" },
      { path: "env.A", kind: "same", before: "1", after: "1" },
      { path: "env.B", kind: "removed", before: "2" },
      { path: "ports", kind: "changed", before: [80], after: [80, 443] },
      { path: "env.C", kind: "added", after: "3" },
    ]);
  });

  it("treats a missing snapshot as all added or all removed", () => {
    expect(diffFields(null, { a: 1 })).toEqual([{ path: "a", kind: "added", after: 1 }]);
    expect(diffFields({ a: 1 }, null)).toEqual([{ path: "a", kind: "removed", before: 1 }]);
    expect(diffFields(null, null)).toEqual([]);
  });

  it("diffs lines with the longest common subsequence", () => {
    const ops = diffLines(
      "services:\n  web:\n    image: a\n    ports: [80]",
      "services:\n  web:\n    image: b\n    ports: [80]\n  db: {}",
    );
    expect(ops.map((o) => `${o.kind === "add" ? "+" : o.kind === "del" ? "-" : " "}${o.text.trim()}`)).toEqual([
      " services:",
      " web:",
      "-image: a",
      "+image: b",
      " ports: [80]",
      "+db: {}",
    ]);
  });
});
