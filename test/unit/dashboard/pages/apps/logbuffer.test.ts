/** The container log buffer (pages/apps/logbuffer.ts): time order, de-duplication after a reconnect, the bound. */
import { describe, expect, test } from "bun:test";
import { ContainerLogBuffer, sortableTs } from "../../../../../src/dashboard/pages/apps/logbuffer";

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
