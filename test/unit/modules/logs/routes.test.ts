/** The logs stream's `since`: durations back from now and RFC 3339 times; anything else is refused. */
import { describe, expect, it } from "bun:test";
import { parseSince } from "../../../../src/modules/logs/routes";

describe("logs since", () => {
  const now = Date.parse("2026-11-22T12:00:00Z");
  it("takes durations back from now and RFC 3339 times, and rejects the rest", () => {
    expect(parseSince("10m", now)).toBe((now - 600_000) / 1000);
    expect(parseSince("2026-11-22T11:00:00Z", now)).toBe(Date.parse("2026-11-22T11:00:00Z") / 1000);
    expect(parseSince("", now)).toBeNull();
    expect(parseSince(undefined, now)).toBeNull();
    expect(parseSince("yesterday", now)).toBeNaN();
  });
});
