/** The log sink: line format, levels, sanitising, ring buffer, subscribers, child components and stdout. */
import { afterEach, describe, expect, it, spyOn } from "bun:test";
import { LogSink } from "../../../src/log/logger";

const quiet = (opts: ConstructorParameters<typeof LogSink>[0] = {}) => new LogSink({ stdout: false, ...opts });

/** The message part of a line: everything after the `[component] ` tag. */
const message = (line: string) => line.slice(line.indexOf("] ") + 2);

describe("LogSink", () => {
  let stdoutSpy: ReturnType<typeof spyOn> | undefined;
  afterEach(() => {
    stdoutSpy?.mockRestore();
    stdoutSpy = undefined;
  });

  it("formats a line as ISO timestamp, level, [component] tag, message", () => {
    const sink = quiet();
    sink.logger("api").info("server started");
    const [line] = sink.snapshot();
    expect(line).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z INFO +\[api\] server started$/);
    const ts = line.split(" ")[0];
    expect(new Date(ts).toISOString()).toBe(ts);
    expect(Math.abs(Date.parse(ts) - Date.now())).toBeLessThan(60_000);
  });

  it("writes each level in upper case", () => {
    const sink = quiet({ level: "debug" });
    const log = sink.logger("c");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    expect(sink.snapshot().map((l) => l.split(" ").filter(Boolean)[1])).toEqual(["DEBUG", "INFO", "WARN", "ERROR"]);
  });

  it("appends fields as key=value", () => {
    const sink = quiet();
    sink.logger("deploy").info("deploy done", { app: "blog", ms: 1234, ok: true });
    expect(message(sink.snapshot()[0])).toBe("deploy done app=blog ms=1234 ok=true");
  });

  it("quotes field values with spaces, quotes or equals signs, and empty values", () => {
    const sink = quiet();
    sink.logger("c").info("m", { reason: "disk full", q: 'say "hi"', eq: "a=b", empty: "" });
    expect(message(sink.snapshot()[0])).toBe('m reason="disk full" q="say \\"hi\\"" eq="a=b" empty=""');
  });

  it("writes an Error field as its message and objects as JSON, skipping undefined", () => {
    const sink = quiet();
    sink.logger("c").error("failed", { err: new Error("disk full"), ports: [80, 443], skipped: undefined });
    expect(message(sink.snapshot()[0])).toBe('failed err="disk full" ports=[80,443]');
  });

  it("drops lines below the configured level", () => {
    const sink = quiet({ level: "warn" });
    const log = sink.logger("c");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    expect(sink.snapshot().map(message)).toEqual(["w", "e"]);
  });

  it("writes info and above but not debug by default", () => {
    const sink = quiet();
    sink.logger("c").debug("hidden");
    sink.logger("c").info("shown");
    expect(sink.snapshot().map(message)).toEqual(["shown"]);
  });

  it("sanitises the whole line, fields included", () => {
    const sink = quiet();
    sink.logger("c").info("\x1b[31mred\x1b[0m\nforged", { user: "eve\nINFO [auth] login ok" });
    const [line] = sink.snapshot();
    expect(line).not.toMatch(/[\x00-\x08\x0a-\x1f]/);
    expect(message(line)).toBe('redforged user="eve\\nINFO [auth] login ok"');
  });

  it("cuts a long line to 8 KiB", () => {
    const sink = quiet();
    sink.logger("c").info("x".repeat(20_000));
    expect(new TextEncoder().encode(sink.snapshot()[0]).length).toBe(8192);
  });

  it("keeps the newest `capacity` lines, oldest first", () => {
    const sink = quiet({ capacity: 3 });
    const log = sink.logger("c");
    for (let i = 1; i <= 7; i++) log.info(`line ${i}`);
    expect(sink.snapshot().map(message)).toEqual(["line 5", "line 6", "line 7"]);
  });

  it("returns fewer lines than capacity before it fills", () => {
    const sink = quiet({ capacity: 5 });
    sink.logger("c").info("one");
    sink.logger("c").info("two");
    expect(sink.snapshot().map(message)).toEqual(["one", "two"]);
  });

  it("starts empty", () => {
    expect(quiet().snapshot()).toEqual([]);
  });

  it("keeps the buffer in order across many wraps", () => {
    const sink = quiet({ capacity: 4 });
    for (let i = 0; i < 1003; i++) sink.logger("c").info(String(i));
    expect(sink.snapshot().map(message)).toEqual(["999", "1000", "1001", "1002"]);
  });

  it("returns a copy, so later lines do not change an earlier snapshot", () => {
    const sink = quiet({ capacity: 2 });
    sink.logger("c").info("a");
    const before = sink.snapshot();
    sink.logger("c").info("b");
    sink.logger("c").info("c");
    expect(before.map(message)).toEqual(["a"]);
  });

  it("sends each later line to subscribers", () => {
    const sink = quiet();
    sink.logger("c").info("before");
    const got: string[] = [];
    sink.subscribe((l) => got.push(l));
    sink.logger("c").info("after");
    expect(got).toHaveLength(1);
    expect(got[0]).toBe(sink.snapshot()[1]);
    expect(message(got[0])).toBe("after");
  });

  it("stops sending lines after unsubscribe", () => {
    const sink = quiet();
    const got: string[] = [];
    const unsubscribe = sink.subscribe((l) => got.push(message(l)));
    sink.logger("c").info("one");
    unsubscribe();
    sink.logger("c").info("two");
    expect(got).toEqual(["one"]);
  });

  it("keeps logging and notifying others when a subscriber throws", () => {
    const sink = quiet();
    const got: string[] = [];
    sink.subscribe(() => {
      throw new Error("subscriber broke");
    });
    sink.subscribe((l) => got.push(message(l)));
    expect(() => sink.logger("c").info("still works")).not.toThrow();
    sink.logger("c").info("and again");
    expect(got).toEqual(["still works", "and again"]);
    expect(sink.snapshot().map(message)).toEqual(["still works", "and again"]);
  });

  it("does not send filtered-out lines to subscribers", () => {
    const sink = quiet({ level: "error" });
    const got: string[] = [];
    sink.subscribe((l) => got.push(l));
    sink.logger("c").warn("no");
    expect(got).toEqual([]);
  });

  it("tags a child logger's lines with the child's component", () => {
    const sink = quiet();
    sink.logger("app").child("proxy").info("swapped routes");
    expect(sink.snapshot()[0]).toContain("[proxy] swapped routes");
  });

  it("writes nothing to stdout when stdout is false", () => {
    stdoutSpy = spyOn(process.stdout, "write").mockImplementation(() => true);
    const sink = quiet();
    sink.logger("c").error("not on stdout");
    expect(stdoutSpy).not.toHaveBeenCalled();
    expect(sink.snapshot()).toHaveLength(1);
  });

  it("writes each line with a newline to stdout by default", () => {
    stdoutSpy = spyOn(process.stdout, "write").mockImplementation(() => true);
    const sink = new LogSink();
    sink.logger("c").info("on stdout");
    expect(stdoutSpy).toHaveBeenCalledTimes(1);
    expect(stdoutSpy.mock.calls[0][0]).toBe(`${sink.snapshot()[0]}\n`);
  });
});
