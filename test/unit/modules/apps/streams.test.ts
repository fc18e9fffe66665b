/** Container log frames as SPEC shapes them: `ts` only when the line carried a timestamp, never an empty string. */
import { describe, expect, it } from "bun:test";
import { logFrame } from "../../../../src/modules/apps/streams";

describe("container log frames", () => {
  it("carry the line's timestamp when it has one", () => {
    expect(logFrame({ ts: "2026-11-27T00:00:01.5Z", stream: "stdout", line: "hello" })).toEqual({
      ts: "2026-11-27T00:00:01.5Z",
      stream: "stdout",
      line: "hello",
    });
  });

  it("omit ts when the line has none", () => {
    const f = logFrame({ ts: null, stream: "stderr", line: "no time here" });
    expect(f).toEqual({ stream: "stderr", line: "no time here" });
    expect("ts" in f).toBe(false);
    expect(JSON.stringify(f)).toBe('{"stream":"stderr","line":"no time here"}');
  });
});
