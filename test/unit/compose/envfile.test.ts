/** The .env reader: quoting, escapes, comments and export lines as compose reads them; the writer round-trips. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose interpolation syntax is the subject under test
import { describe, expect, it } from "bun:test";
import { formatEnvFile, parseEnvFile } from "../../../src/compose/envfile";
import { ComposeError } from "../../../src/compose/model";

function envError(text: string): ComposeError {
  try {
    parseEnvFile(text);
  } catch (e) {
    if (e instanceof ComposeError) return e;
    throw e;
  }
  throw new Error("parsed");
}

describe("parseEnvFile", () => {
  it("reads KEY=VALUE lines, skipping blanks and comments", () => {
    expect(parseEnvFile("# comment\nA=1\n\n  # indented comment\nB=two words\n")).toEqual({ A: "1", B: "two words" });
  });

  it("accepts an export prefix and spaces around the equals sign", () => {
    expect(parseEnvFile("export A=1\nB = 2\n  export   C=3")).toEqual({ A: "1", B: "2", C: "3" });
  });

  it("reads empty values", () => {
    expect(parseEnvFile("A=\nB=''\nC=\"\"\n")).toEqual({ A: "", B: "", C: "" });
  });

  it("keeps everything after the first equals sign", () => {
    expect(parseEnvFile("URL=postgres://u:p@h/db?sslmode=require&x=1")).toEqual({
      URL: "postgres://u:p@h/db?sslmode=require&x=1",
    });
  });

  it("drops an inline comment after whitespace on unquoted values only", () => {
    expect(parseEnvFile("A=value # note\nB=a#b\nC='x # y' # note\nD=\"x # y\"")).toEqual({
      A: "value",
      B: "a#b",
      C: "x # y",
      D: "x # y",
    });
  });

  it("takes single-quoted values literally", () => {
    expect(parseEnvFile("A='a\\nb $HOME \"q\"'")).toEqual({ A: 'a\\nb $HOME "q"' });
  });

  it("expands escapes in double-quoted values", () => {
    expect(parseEnvFile('A="line1\\nline2\\ttab \\"q\\" \\\\ \\$x"')).toEqual({ A: 'line1\nline2\ttab "q" \\ $x' });
  });

  it("reads quoted values that span lines", () => {
    expect(parseEnvFile('KEY="-----BEGIN-----\nabc\n-----END-----"\nNEXT=1')).toEqual({
      KEY: "-----BEGIN-----\nabc\n-----END-----",
      NEXT: "1",
    });
  });

  it("handles CRLF line endings and a byte order mark", () => {
    expect(parseEnvFile("\uFEFFA=1\r\nB=2\r\n")).toEqual({ A: "1", B: "2" });
  });

  it("lets a later line override an earlier one", () => {
    expect(parseEnvFile("A=1\nA=2")).toEqual({ A: "2" });
  });

  it.each([
    ["a line without an equals sign", "A=1\nJUSTAKEY\n", 2],
    ["an invalid variable name", "A=1\nB=2\n1BAD=x", 3],
    ["a name with a dash", "MY-VAR=x", 1],
    ["an unterminated quote", 'A=1\nB="open\nC=3', 2],
    ["text after a closing quote", "A='x'y", 1],
  ] as const)("rejects %s with its line number", (_what, text, line) => {
    const err = envError(text);
    expect(err.rule).toBe("env");
    expect(err.service).toBeNull();
    expect(err.status).toBe(400);
    expect(err.message).toContain(`line ${line}`);
  });

  it("counts lines of multi-line values when reporting a later error", () => {
    expect(envError("A='one\ntwo'\nBAD LINE").message).toContain("line 3");
  });
});

describe("formatEnvFile", () => {
  const samples: Record<string, string> = {
    PLAIN: "abc-123_./:@%+,=",
    EMPTY: "",
    SPACES: "two words",
    HASH: "a #b",
    DOLLAR: "pa$$word $HOME ${X}",
    SINGLE: "it's",
    DOUBLE: 'say "hi"',
    BOTH: `it's "both" $x`,
    NEWLINE: "line1\nline2",
    CR: "a\rb",
    BACKSLASH: "C:\\path\\n",
    UNICODE: "héllo ✓",
    TAB: "a\tb",
  };

  it("round-trips every kind of value through parseEnvFile", () => {
    expect(parseEnvFile(formatEnvFile(samples))).toEqual(samples);
  });

  it("writes simple values unquoted, one per line", () => {
    expect(formatEnvFile({ A: "1", B: "x" })).toBe("A=1\nB=x\n");
  });

  it("writes an empty map as an empty file", () => {
    expect(formatEnvFile({})).toBe("");
  });

  it("single-quotes values with a dollar so compose does not expand them either", () => {
    expect(formatEnvFile({ P: "a$b" })).toBe("P='a$b'\n");
  });

  it("refuses keys that are not variable names", () => {
    expect(() => formatEnvFile({ "BAD-KEY": "x" })).toThrow(ComposeError);
    expect(() => formatEnvFile({ "A\nB": "x" })).toThrow("invalid variable name");
  });
});
