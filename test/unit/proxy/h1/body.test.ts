/** Bodies are read to their exact end: Content-Length counted across reads, chunked decoded strictly and re-encoded. */
import { describe, expect, it } from "bun:test";
import { BodyReader, encodeChunks } from "../../../../src/proxy/h1/body";
import { framingStatus as status } from "../../../helpers/proxy";

describe("body reader", () => {
  it("counts a Content-Length body across chunks and stops at its end; length 0 is done at once", () => {
    const r = new BodyReader({ kind: "length", length: 5 });
    expect(r.feed(Buffer.from("abc"))).toBe(3);
    expect(r.done).toBe(false);
    expect(r.feed(Buffer.from("deGET"))).toBe(2);
    expect(r.done).toBe(true);
    expect(new BodyReader({ kind: "length", length: 0 }).done).toBe(true);
  });

  it("decodes chunked bodies byte by byte, checking and dropping extensions and trailers", () => {
    const wire =
      '4;ext=1;q="a b\\"c"\r\nWiki\r\n5;flag\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\nOther:y \r\n\r\nNEXT';
    const parts: string[] = [];
    const split = new BodyReader({ kind: "chunked" }, (b, s, e) => parts.push(b.toString("latin1", s, e)));
    let used = 0;
    for (const ch of wire) {
      if (split.done) break;
      used += split.feed(Buffer.from(ch, "latin1"));
    }
    expect(split.done).toBe(true);
    expect(used).toBe(wire.length - 4);
    expect(parts.join("")).toBe("Wikipedia in\r\n\r\nchunks.");
  });

  it.each([
    ["a size that is not hex", "x\r\n"],
    ["data without CRLF", "4\r\nWikiXX"],
    ["an LF-only size line", "4\nWiki\r\n"],
    ["17 hex digits", "00000000000000001\r\n"],
    ["a negative size", "-5\r\n"],
    ["a 0x prefix", "0x5\r\n"],
    ["a space after the size", "5 \r\n"],
    ["a space before an extension", "5 ;a=b\r\n"],
    ["spaces inside an extension", "5; a = b\r\n"],
    ["an extension without a name", "5;\r\n"],
    ["a control in a quoted extension", '5;a="\x01"\r\n'],
    ["a trailer without a colon", "0\r\nbad\r\n\r\n"],
    ["a folded trailer", "0\r\nA: b\r\n c\r\n\r\n"],
    ["a trailer with NUL", "0\r\nA: \0\r\n\r\n"],
    ["an LF after the last chunk", "0\r\n\n"],
  ])("refuses a chunked body with %s", (_what, bad) => {
    expect(status(() => new BodyReader({ kind: "chunked" }, () => {}).feed(Buffer.from(bad, "latin1")))).toBe(400);
  });

  it("bounds trailer sections and reports upstream errors as 502", () => {
    const many = `0\r\n${"A: b\r\n".repeat(3)}\r\n`;
    const reader = () => new BodyReader({ kind: "chunked" }, () => {}, 400, { maxHeaders: 2, maxHeaderBytes: 1024 });
    expect(status(() => reader().feed(Buffer.from(many)))).toBe(400);
    expect(status(() => new BodyReader({ kind: "chunked" }, undefined, 502).feed(Buffer.from("zz\r\n")))).toBe(502);
  });

  it("encodes chunks in one buffer, leaving empty parts out", () => {
    const out = encodeChunks([Buffer.from("Wiki"), Buffer.alloc(0), Buffer.from("x".repeat(26))], true);
    expect(out.toString()).toBe(`4\r\nWiki\r\n1a\r\n${"x".repeat(26)}\r\n0\r\n\r\n`);
    expect(encodeChunks([], false).length).toBe(0);
  });
});
