/** Log lines lose escape sequences and control characters and are cut to 8 KiB of UTF-8 on a character boundary. */
import { describe, expect, it } from "bun:test";
import { MAX_LINE_BYTES, sanitizeLine, truncateUtf8 } from "../../../src/log/sanitize";

const ESC = "\x1b";
const BEL = "\x07";
const ST = `${ESC}\\`;
const utf8Length = (s: string) => new TextEncoder().encode(s).length;

describe("sanitizeLine", () => {
  it("leaves plain text alone", () => {
    expect(sanitizeLine("web-1  | listening on :8080")).toBe("web-1  | listening on :8080");
  });

  it("strips ANSI colour sequences", () => {
    expect(sanitizeLine(`${ESC}[31merror${ESC}[0m: ${ESC}[1;38;5;208mboom${ESC}[m`)).toBe("error: boom");
  });

  it("strips other CSI sequences (cursor moves, erase line, private modes)", () => {
    expect(sanitizeLine(`${ESC}[2K${ESC}[1A${ESC}[?25lprogress 50%${ESC}[?25h`)).toBe("progress 50%");
  });

  it("strips the single-byte C1 CSI form", () => {
    expect(sanitizeLine("\x9b31mred\x9b0m")).toBe("red");
  });

  it("strips an OSC window title ended by BEL", () => {
    expect(sanitizeLine(`${ESC}]0;pwned title${BEL}after`)).toBe("after");
  });

  it("strips an OSC window title ended by ST", () => {
    expect(sanitizeLine(`before${ESC}]2;title${ST}after`)).toBe("beforeafter");
  });

  it("strips OSC 8 hyperlinks and keeps their text", () => {
    expect(sanitizeLine(`see ${ESC}]8;;https://evil.example/${ST}the docs${ESC}]8;;${ST} now`)).toBe("see the docs now");
    expect(sanitizeLine(`see ${ESC}]8;;https://evil.example/${BEL}the docs${ESC}]8;;${BEL} now`)).toBe("see the docs now");
  });

  it("strips an unterminated OSC to the end of the line", () => {
    expect(sanitizeLine(`ok ${ESC}]0;never ends`)).toBe("ok ");
  });

  it("removes a stray escape character", () => {
    expect(sanitizeLine(`trailing${ESC}`)).toBe("trailing");
    expect(sanitizeLine(`${ESC}`)).toBe("");
    expect(sanitizeLine(`a${ESC} b`)).not.toContain(ESC);
  });

  it("never leaves an escape character in its output", () => {
    const nasty = `${ESC}[${ESC}]${ESC}${ESC}[31${ESC}]8;${ESC}(B${ESC}Px${ST}`;
    expect(sanitizeLine(nasty)).not.toContain(ESC);
  });

  it("keeps tabs", () => {
    expect(sanitizeLine("a\tb\tc")).toBe("a\tb\tc");
  });

  it("drops newlines and carriage returns so one call is one line", () => {
    expect(sanitizeLine("first\nsecond")).toBe("firstsecond");
    expect(sanitizeLine("spinner\rdone\r\n")).toBe("spinnerdone");
  });

  it("drops other C0 controls, DEL and C1 controls", () => {
    expect(sanitizeLine("a\x00b\x01c\x08d\x0be\x0cf\x7fg\x85h\x9fi")).toBe("abcdefghi");
  });

  it("keeps printable unicode", () => {
    expect(sanitizeLine("déployé ✓ 部署 🚀")).toBe("déployé ✓ 部署 🚀");
  });

  it("cuts a line longer than 8 KiB to 8 KiB", () => {
    expect(MAX_LINE_BYTES).toBe(8192);
    const out = sanitizeLine("x".repeat(20_000));
    expect(out).toBe("x".repeat(8192));
  });

  it("keeps a line of exactly 8 KiB whole", () => {
    const line = "y".repeat(8192);
    expect(sanitizeLine(line)).toBe(line);
  });

  it("measures the limit in UTF-8 bytes, not characters", () => {
    // 3000 three-byte characters = 9000 bytes
    const out = sanitizeLine("€".repeat(3000));
    expect(utf8Length(out)).toBeLessThanOrEqual(8192);
    expect(out).toBe("€".repeat(2730));
  });

  it("does not split a multi-byte character at the cut", () => {
    // 8191 ASCII bytes, then a 4-byte emoji straddling the limit
    const out = sanitizeLine(`${"a".repeat(8191)}🚀tail`);
    expect(out).toBe("a".repeat(8191));
    expect(out).not.toContain("\ufffd");
  });

  it("cuts after escapes are stripped, so colour codes do not eat the budget", () => {
    const out = sanitizeLine(`${ESC}[31m`.repeat(2000) + "z".repeat(8192));
    expect(out).toBe("z".repeat(8192));
  });
});

describe("truncateUtf8", () => {
  it("returns short text unchanged", () => {
    expect(truncateUtf8("héllo", 100)).toBe("héllo");
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8, 9])("cuts to at most %d bytes on a character boundary", (max) => {
    const text = "aé€🚀b";
    const out = truncateUtf8(text, max);
    expect(utf8Length(out)).toBeLessThanOrEqual(max);
    expect(text.startsWith(out)).toBe(true);
    expect(out).not.toContain("\ufffd");
  });

  it("keeps as many whole characters as fit", () => {
    // a=1, é=2, €=3, 🚀=4 bytes
    expect(truncateUtf8("aé€🚀b", 3)).toBe("aé");
    expect(truncateUtf8("aé€🚀b", 5)).toBe("aé");
    expect(truncateUtf8("aé€🚀b", 6)).toBe("aé€");
    expect(truncateUtf8("aé€🚀b", 9)).toBe("aé€");
    expect(truncateUtf8("aé€🚀b", 10)).toBe("aé€🚀");
  });
});
