/** The process-log buffer (pages/logs/buffer.ts): timestamps and levels, de-duplication after a reconnect, the bound. */
import { describe, expect, it } from "bun:test";
import { LogBuffer, levelOf, timestampOf } from "../../../../../src/dashboard/pages/logs/buffer";

describe("process log buffer", () => {
  const line = (ts: string, msg: string) => `2026-01-01T00:00:${ts}Z INFO  [auth] ${msg}`;

  it("parses the timestamp and level of a line", () => {
    expect(timestampOf(line("01.000", "x"))).toBe("2026-01-01T00:00:01.000Z");
    expect(levelOf("2026-01-01T00:00:01.000Z WARN  [auth] login failed")).toBe("warn");
    expect(timestampOf("no timestamp")).toBeNull();
  });

  it("skips the replayed lines after a reconnect and keeps the new ones", () => {
    const b = new LogBuffer();
    for (const l of [line("01.000", "a"), line("02.000", "b"), line("02.000", "c")]) b.push(l);
    b.resync();
    const replay = [line("01.000", "a"), line("02.000", "b"), line("02.000", "c"), line("02.000", "d"), line("03.000", "e")];
    for (const l of replay) b.push(l);
    expect(b.lines.map((l) => l.text.slice(-1))).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("keeps at most `max` lines", () => {
    const b = new LogBuffer(3);
    for (let i = 0; i < 5; i++) b.push(`line ${i}`);
    expect(b.lines.map((l) => l.text)).toEqual(["line 2", "line 3", "line 4"]);
  });
});
