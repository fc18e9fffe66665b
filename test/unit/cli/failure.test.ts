/** How a thrown error ends the CLI: client and CLI failures exit 1 with their line, usage mistakes 2 with a pointer to --help. */
import { describe, expect, it } from "bun:test";
import { CliError } from "../../../src/cli/errors";
import { ExitCode, Interrupted, UsageError } from "../../../src/cli/exit";
import { failureOf, isWorkFailure } from "../../../src/cli/failure";
import { ClientError } from "../../../src/client/errors";
import { ConfigError } from "../../../src/config/schema";

describe("the end of a failed command", () => {
  it.each([
    [
      "a client failure",
      new ClientError("cannot reach https://x: connection refused"),
      1,
      "cannot reach https://x: connection refused",
    ],
    ["a CLI failure", new CliError("no user named bob"), 1, "no user named bob"],
    [
      "a config error",
      new ConfigError("tls.mode", "must be one of auto, custom, off, local"),
      1,
      "config: tls.mode: must be one of auto, custom, off, local",
    ],
    [
      "a client usage mistake",
      new ClientError("--output must be text or json, not xml", { usage: true }),
      2,
      "--output must be text or json, not xml (see sundeck --help)",
    ],
    [
      "a CLI usage mistake",
      new UsageError("--tail must be a whole number"),
      2,
      "--tail must be a whole number (see sundeck --help)",
    ],
    ["an interrupt", new Interrupted("interrupted: the deploy goes on"), 130, "interrupted: the deploy goes on"],
    ["a bare exit code", new ExitCode(1), 1, null],
    ["a bug", new TypeError("x is undefined"), 1, "x is undefined"],
  ])("%s", (_, error, code, line) => {
    expect(failureOf(error)).toEqual({ code, line });
  });

  it("reads citty's own argument errors as usage mistakes, without colour or trailing period", () => {
    const e = Object.assign(new Error("Missing required argument: \x1b[36m--username\x1b[39m."), {
      name: "CLIError",
      code: "EARG",
    });
    expect(failureOf(e)).toEqual({ code: 2, line: "missing required argument: --username (see sundeck --help)" });
  });

  it("counts failures of the work, not usage mistakes or interrupts, as a sync step's failure", () => {
    expect(isWorkFailure(new ClientError("boom"))).toBe(true);
    expect(isWorkFailure(new CliError("boom"))).toBe(true);
    expect(isWorkFailure(new ClientError("bad flag", { usage: true }))).toBe(false);
    expect(isWorkFailure(new Interrupted("stop"))).toBe(false);
  });
});
