/** The deploy form's checks (pages/apps/validate.ts): slug, compose shape with line numbers, env rows. */
import { describe, expect, test } from "bun:test";
import {
  composeProblems,
  emptyRow,
  envProblems,
  fromRows,
  slugProblem,
  toRows,
} from "../../../../../src/dashboard/pages/apps/validate";

describe("slug check", () => {
  test.each([
    ["blog", null],
    ["my-app-2", null],
    ["a".repeat(63), null],
  ])("accepts %p", (slug, want) => {
    expect(slugProblem(slug)).toBe(want);
  });
  test.each(["", "Blog", "my_app", "-app", "app-", "my--app", "a".repeat(64), "app.1"])("refuses %p", (slug) => {
    expect(slugProblem(slug)).not.toBeNull();
  });
});

describe("compose check", () => {
  test("passes a valid file", () => {
    expect(composeProblems('services:\n  web:\n    image: nginx\n    ports:\n      - "8080:80"\n')).toEqual([]);
  });
  test("reports a YAML error with its line", () => {
    const [p] = composeProblems("services:\n  web:\n    image: [\n");
    expect(p.line).toBe(4);
    expect(p.message).not.toContain("at line");
  });
  test("reports a repeated key", () => {
    expect(composeProblems("services:\n  web:\n    image: a\n    image: b\n")[0].line).toBe(4);
  });
  test("needs a services mapping", () => {
    expect(composeProblems("version: '3'\n")[0].message).toContain("services");
    expect(composeProblems("")[0].message).toContain("empty");
    expect(composeProblems("- a\n")[0].message).toContain("mapping");
  });
  test("points at the service without an image and at ports that are not a list", () => {
    expect(composeProblems("services:\n  web:\n    image: x\n  db:\n    ports: 5432\n")).toEqual([
      { line: 4, message: 'service "db" has no image' },
      { line: 5, message: 'service "db": ports must be a list' },
    ]);
  });
  test("leaves the security rules to the server", () => {
    expect(composeProblems("services:\n  web:\n    image: x\n    privileged: true\n")).toEqual([]);
  });
});

describe("env rows", () => {
  test("round-trip, sorted, empty rows dropped", () => {
    const rows = toRows({ B: "2", A: "1" });
    expect(rows.map((r) => r.key)).toEqual(["A", "B"]);
    expect(fromRows([...rows, emptyRow()])).toEqual({ A: "1", B: "2" });
  });
  test("viewers' null values become empty", () => {
    expect(toRows({ A: null })[0].value).toBe("");
  });
  test("flags bad and repeated names", () => {
    const rows = [
      { id: 1, key: "GOOD", value: "" },
      { id: 2, key: "1BAD", value: "x" },
      { id: 3, key: "GOOD", value: "y" },
      { id: 4, key: "", value: "" },
    ];
    const p = envProblems(rows);
    expect([...p.keys()]).toEqual([2, 3]);
    expect(p.get(3)).toContain("twice");
  });
});
