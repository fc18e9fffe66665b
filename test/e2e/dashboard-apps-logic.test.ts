/** Pure parts of the dashboard's app pages: slug and compose checks, env rows, container log de-duplication, outcomes. */
import { describe, expect, test } from "bun:test";
import { ContainerLogBuffer, sortableTs } from "../../src/dashboard/pages/apps/logbuffer";
import { resultFromSummary, rollbackVersion } from "../../src/dashboard/pages/apps/useDeployRun";
import { composeProblems, emptyRow, envProblems, fromRows, slugProblem, toRows } from "../../src/dashboard/pages/apps/validate";

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

describe("container log buffer", () => {
  test("timestamps sort by time whatever their fraction length", () => {
    expect(sortableTs("2026-01-01T00:00:01.1Z") > sortableTs("2026-01-01T00:00:01.12Z")).toBe(false);
    expect(sortableTs("2026-01-01T00:00:01Z") < sortableTs("2026-01-01T00:00:01.000000001Z")).toBe(true);
  });
  test("a reconnect skips the history it already holds and keeps new lines", () => {
    const b = new ContainerLogBuffer();
    const f = (s: number, line: string, stream: "stdout" | "stderr" = "stdout") => ({
      ts: `2026-01-01T00:00:0${s}.5Z`,
      stream,
      line,
    });
    for (const x of [f(1, "a"), f(2, "b"), f(2, "c", "stderr")]) b.push(x);
    b.resync();
    // the server sends its tail again, then what happened while we were away
    for (const x of [f(1, "a"), f(2, "b"), f(2, "c", "stderr"), f(2, "d"), f(3, "e")]) b.push(x);
    expect(b.lines.map((l) => l.line)).toEqual(["a", "b", "c", "d", "e"]);
    expect(b.lines[2].stream).toBe("stderr");
  });
  test("is bounded", () => {
    const b = new ContainerLogBuffer(3);
    for (let i = 0; i < 5; i++) b.push({ ts: "", stream: "stdout", line: String(i) });
    expect(b.lines.map((l) => l.line)).toEqual(["2", "3", "4"]);
  });
  test("ignores frames that are not lines", () => {
    const b = new ContainerLogBuffer();
    expect(b.push({ error: "not found" })).toBe(false);
    expect(b.lines).toEqual([]);
  });
});

describe("deploy outcome from the done frame", () => {
  test.each([
    ["deployed version 3", "succeeded", null],
    ["done", "succeeded", null],
    ["removed", "succeeded", null],
    ["deploy failed: image not found", "failed", "image not found"],
    ["failed: cancelled", "cancelled", "cancelled"],
    ["", "unknown", null],
  ])("%p", (summary, status, error) => {
    expect(resultFromSummary(summary)).toEqual({ status: status as any, error, rolledBack: null });
  });
  test("finds the version an automatic rollback went back to", () => {
    const line = (output: string) => ({ n: 1, timestamp: "", action: "up", output });
    expect(rollbackVersion([line("deploy failed: x"), line("rolling back to version 4"), line("done")])).toBe(4);
    expect(rollbackVersion([line("deployed version 2")])).toBeNull();
  });
});
