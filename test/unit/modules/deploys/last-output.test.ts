/** The last output a failed container's error quotes: in the order it was written, its end kept when long. */
import { describe, expect, it } from "bun:test";
import { lastLines } from "../../../../src/modules/deploys/stabilize";
import { ScriptedEngine } from "../../../helpers/fake-engine";

const line = (ts: string | null, text: string, stream: "stdout" | "stderr" = "stdout") => ({ ts, stream, line: text });

describe("a failed container's last output", () => {
  it("puts lines Docker logged out of order (stdout and stderr copied apart) back by their time", async () => {
    const e = new ScriptedEngine();
    e.running.set("c1", false);
    // what the engine gave for `echo starting; echo "fatal: missing X" >&2`: stderr logged first, a hair later in time
    e.write(
      "c1",
      line("2026-11-27T10:00:00.000412345Z", "fatal: missing X", "stderr"),
      line("2026-11-27T10:00:00.0004Z", "starting"),
    );
    expect(await lastLines(e.asEngine(), "c1")).toBe("; last output: starting | fatal: missing X");
  });

  it("orders across a second boundary and fraction lengths Docker trims", async () => {
    const e = new ScriptedEngine();
    e.running.set("c1", false);
    e.write("c1", line("2026-11-27T10:00:01.1Z", "b"), line("2026-11-27T10:00:00.9Z", "a"), line("2026-11-27T10:00:01.2Z", "c"));
    expect(await lastLines(e.asEngine(), "c1")).toBe("; last output: a | b | c");
  });

  it("keeps the end of a long output, where the cause is", async () => {
    const e = new ScriptedEngine();
    e.running.set("c1", false);
    e.write("c1", line("2026-11-27T10:00:00Z", "x".repeat(2000)), line("2026-11-27T10:00:01Z", "Error: the real cause"));
    const text = await lastLines(e.asEngine(), "c1");
    expect(text).toEndWith("x | Error: the real cause");
    expect(text.length).toBeLessThan(650);
  });
});
