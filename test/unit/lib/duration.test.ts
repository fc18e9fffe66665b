/** Durations parse in Go and day formats, refuse malformed text, and format back to text of the same length. */
import { describe, expect, it } from "bun:test";
import { formatDuration, parseDuration } from "../../../src/lib/duration";

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe("parseDuration", () => {
  it.each([
    ["250ms", 250],
    ["60s", 60 * S],
    ["5m", 5 * M],
    ["24h", 24 * H],
    ["1h30m", H + 30 * M],
    ["2h45m30s", 2 * H + 45 * M + 30 * S],
    ["1m500ms", M + 500],
    ["8760h", 8760 * H],
  ] as const)("reads the Go duration %s", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it("reads fractional values such as 1.5h and 0.5s", () => {
    expect(parseDuration("1.5h")).toBe(90 * M);
    expect(parseDuration("0.5s")).toBe(500);
  });

  it("reads sub-millisecond units as fractions of a millisecond", () => {
    expect(parseDuration("1500us")).toBe(1.5);
    expect(parseDuration("1500µs")).toBe(1.5);
    expect(parseDuration("2000000ns")).toBe(2);
  });

  it("reads a bare 0 and zero with a unit as no time", () => {
    expect(parseDuration("0")).toBe(0);
    expect(parseDuration("0s")).toBe(0);
  });

  it("reads the day format", () => {
    expect(parseDuration("7d")).toBe(7 * D);
    expect(parseDuration("30d")).toBe(30 * D);
    expect(parseDuration("1d12h")).toBe(D + 12 * H);
  });

  it("ignores surrounding whitespace", () => {
    expect(parseDuration("  24h\n")).toBe(24 * H);
  });

  it.each([
    ["the empty string", ""],
    ["only whitespace", "   "],
    ["a number without a unit", "10"],
    ["a number followed by a unit-less remainder", "1h30"],
    ["an unknown unit", "1x"],
    ["a unit before the number", "h1"],
    ["a bare unit", "s"],
    ["a negative value", "-5s"],
    ["spaces between parts", "1h 30m"],
    ["a trailing garbage character", "10s!"],
    ["words", "ten seconds"],
    ["an upper-case unit", "10S"],
  ])("rejects %s", (_what, text) => {
    expect(parseDuration(text)).toBeNull();
  });

  it("gives the same answer when called repeatedly (no state kept between calls)", () => {
    expect(parseDuration("1x")).toBeNull();
    expect(parseDuration("1h")).toBe(H);
    expect(parseDuration("1h")).toBe(H);
  });
});

describe("formatDuration", () => {
  it.each([
    [7 * D, "7d"],
    [D, "1d"],
    [24 * H + H, "25h"],
    [2 * H, "2h"],
    [30 * M, "30m"],
    [90 * S, "90s"],
    [60 * S, "1m"],
    [1500, "1500ms"],
    [250, "250ms"],
    [0, "0s"],
  ] as const)("writes %d ms as %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it("writes durations that parse back to the same length", () => {
    for (const ms of [250, 1500, 90 * S, 30 * M, 25 * H, 7 * D]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
  });
});
