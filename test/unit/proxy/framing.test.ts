import { describe, expect, it } from "bun:test";
import { BodyReader, encodeChunks } from "../../../src/proxy/h1/body";
import {
  FramingError,
  headEnd,
  parseRequestHead,
  parseResponseHead,
  requestFraming,
  responseFraming,
} from "../../../src/proxy/h1/framing";
import { requestTarget, validAuthority } from "../../../src/proxy/h1/request-target";

const req = (head: string) => parseRequestHead(head);

function status(fn: () => unknown): number | null {
  try {
    fn();
    return null;
  } catch (e) {
    if (e instanceof FramingError) return e.status;
    throw e;
  }
}

describe("request heads", () => {
  it("finds the end of a head and parses request lines and fields", () => {
    const raw = Buffer.from("GET /a?b=1 HTTP/1.1\r\nHost: x.test\r\nX-Two: a\r\nx-two: b\r\n\r\nrest");
    const end = headEnd(raw);
    expect(raw.subarray(end).toString()).toBe("rest");
    const head = req(raw.toString("latin1", 0, end - 4));
    expect(head).toMatchObject({ method: "GET", target: "/a?b=1", minor: 1 });
    expect(head.headers.get("host")).toBe("x.test");
    expect(head.headers.get("x-two")).toBe("a, b");
    expect(headEnd(Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n"))).toBe(-1);
  });

  it("trims only SP and HTAB around values", () => {
    expect(req("GET / HTTP/1.1\r\nX: \t a b \t").headers.get("x")).toBe("a b");
    // VT, FF are not whitespace (refused as controls); NBSP is obs-text and stays
    expect(status(() => req("GET / HTTP/1.1\r\nX: \x0ba"))).toBe(400);
    expect(status(() => req("GET / HTTP/1.1\r\nX: a\x0c"))).toBe(400);
    expect(req("GET / HTTP/1.1\r\nX: \xa0a").headers.get("x")).toBe("\xa0a");
  });

  it.each([
    ["folded line", "GET / HTTP/1.1\r\nHost: a\r\n folded", 400],
    ["bare LF", "GET / HTTP/1.1\nHost: a", 400],
    ["bare CR in a value", "GET / HTTP/1.1\r\nX: a\rb", 400],
    ["space in the target", "GET /a b HTTP/1.1", 400],
    ["two spaces", "GET  / HTTP/1.1", 400],
    ["byte past 0x7e in the target", "GET /\x80 HTTP/1.1", 400],
    ["fragment", "GET /a#b HTTP/1.1", 400],
    ["HTTP/2.0", "GET / HTTP/2.0", 505],
    ["HTTP/1.2", "GET / HTTP/1.2", 505],
    ["lower-case protocol", "GET / http/1.1", 400],
    ["trailing space after the version", "GET / HTTP/1.1 ", 400],
    ["lower-case method", "get / HTTP/1.1", 501],
    ["unknown method", "BREW / HTTP/1.1", 501],
    ["CONNECT", "CONNECT a:443 HTTP/1.1", 501],
    ["TRACE", "TRACE / HTTP/1.1", 501],
    ["space before the colon", "GET / HTTP/1.1\r\nBad : x", 400],
    ["empty name", "GET / HTTP/1.1\r\n: x", 400],
    ["NUL in a value", "GET / HTTP/1.1\r\nX: a\0b", 400],
    ["DEL in a value", "GET / HTTP/1.1\r\nX: a\x7fb", 400],
  ])("refuses a %s", (_what, head, code) => {
    expect(status(() => req(head))).toBe(code);
  });

  it("refuses more header fields than allowed with 431", () => {
    const head = `GET / HTTP/1.1${"\r\nX: y".repeat(5)}`;
    expect(status(() => parseRequestHead(head, 4))).toBe(431);
    expect(parseRequestHead(head, 5).headers.pairs).toHaveLength(5);
  });
});

describe("request framing", () => {
  const framing = (head: string) => requestFraming(req(head));

  it("reads Content-Length and chunked, Content-Length 0 as an empty body", () => {
    expect(framing("POST / HTTP/1.1\r\nContent-Length: 0012")).toEqual({ kind: "length", length: 12 });
    expect(framing("POST / HTTP/1.1\r\nContent-Length: 0")).toEqual({ kind: "length", length: 0 });
    expect(framing("POST / HTTP/1.1\r\nTransfer-Encoding:  Chunked ")).toEqual({ kind: "chunked" });
    expect(framing("GET / HTTP/1.1")).toEqual({ kind: "none" });
  });

  it.each([
    ["both lengths and chunked", "Content-Length: 5\r\nTransfer-Encoding: chunked", 400],
    ["two Content-Length lines, even equal", "Content-Length: 5\r\nContent-Length: 5", 400],
    ["a listed Content-Length", "Content-Length: 5, 5", 400],
    ["a signed Content-Length", "Content-Length: +5", 400],
    ["an empty Content-Length", "Content-Length: ", 400],
    ["a 16-digit Content-Length", "Content-Length: 1234567890123456", 400],
    ["two Transfer-Encoding lines", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked", 501],
    ["chunked applied twice", "Transfer-Encoding: chunked, chunked", 501],
    ["gzip before chunked", "Transfer-Encoding: gzip, chunked", 501],
    ["a coding that is not chunked", "Transfer-Encoding: gzip", 501],
    ["junk in Transfer-Encoding", "Transfer-Encoding: chunked;q=1", 400],
    ["a tab after Transfer-Encoding (llhttp refuses it)", "Transfer-Encoding: chunked\t", 400],
    ["a tab after Content-Length (llhttp refuses it)", "Content-Length: 5 \t", 400],
  ])("refuses %s", (_what, fields, code) => {
    expect(status(() => framing(`POST / HTTP/1.1\r\n${fields}`))).toBe(code);
  });

  it("refuses Transfer-Encoding in an HTTP/1.0 request", () => {
    expect(status(() => framing("POST / HTTP/1.0\r\nTransfer-Encoding: chunked"))).toBe(400);
  });
});

describe("Host and the request target", () => {
  const target = (head: string) => requestTarget(req(head));

  it("accepts host names, IPv4 and bracketed IPv6 with an optional port", () => {
    for (const ok of ["a.test", "A-b_c~d.test:8080", "10.0.0.1:80", "[2001:db8::1]", "[::1]:443", "a.test:"]) {
      expect(validAuthority(ok)).toBe(true);
    }
    for (const bad of [
      "",
      "a.test:@evil.example",
      "a.test:80/evil?x",
      "a b",
      "[::1",
      "[::1]x",
      "::1",
      "a.test:99999",
      "[fe80::1%eth0]",
      "a%2e.test",
      "a!.test",
    ]) {
      expect(validAuthority(bad)).toBe(false);
    }
  });

  it("lets the absolute-form authority win over Host and turns the target into origin-form", () => {
    expect(target("GET http://a.test/p?q HTTP/1.1\r\nHost: b.test")).toEqual({ authority: "a.test", target: "/p?q", path: "/p" });
    expect(target("GET HTTP://a.test?q HTTP/1.1\r\nHost: b.test")).toEqual({ authority: "a.test", target: "/?q", path: "/" });
    expect(target("GET /x HTTP/1.0")).toEqual({ authority: "", target: "/x", path: "/x" });
  });

  it.each([
    ["a missing Host", "GET / HTTP/1.1"],
    ["two Host lines", "GET / HTTP/1.1\r\nHost: a.test\r\nHost: a.test"],
    ["junk after the port", "GET / HTTP/1.1\r\nHost: a.test:@evil.example"],
    ["a path in Host", "GET / HTTP/1.1\r\nHost: a.test:80/evil?x"],
    ["an empty Host", "GET / HTTP/1.1\r\nHost: "],
    ["userinfo in an absolute-form target", "GET http://b.test:80@a.test/ HTTP/1.1\r\nHost: a.test"],
    ["an invalid Host beside an absolute-form target", "GET http://a.test/ HTTP/1.1\r\nHost: a.test:x"],
    ["the asterisk form", "OPTIONS * HTTP/1.1\r\nHost: a.test"],
    ["a relative target", "GET a/b HTTP/1.1\r\nHost: a.test"],
    ["another scheme", "GET ftp://a.test/ HTTP/1.1\r\nHost: a.test"],
  ])("refuses %s with 400", (_what, head) => {
    expect(status(() => target(head))).toBe(400);
  });
});

describe("responses", () => {
  const res = (head: string) => parseResponseHead(head);

  it("parses status lines and picks response framing", () => {
    expect(res("HTTP/1.1 404 Not Found\r\ncontent-length: 3")).toMatchObject({ status: 404, reason: "Not Found", minor: 1 });
    expect(res("HTTP/1.0 200").reason).toBe("");
    expect(status(() => res("HTTP/1.1 2000 OK"))).toBe(502);
    expect(status(() => res("HTTP/1.1 600 Odd"))).toBe(502);
    const r = (head: string, method = "GET") => {
      const p = res(head);
      return responseFraming(method, p.status, p);
    };
    expect(r("HTTP/1.1 200 OK\r\ncontent-length: 12", "HEAD")).toEqual({ framing: { kind: "none" }, metaLength: 12 });
    expect(r("HTTP/1.1 304 Not Modified\r\ncontent-length: 12")).toEqual({ framing: { kind: "none" }, metaLength: 12 });
    expect(r("HTTP/1.1 204 No Content\r\ncontent-length: 12")).toEqual({ framing: { kind: "none" }, metaLength: null });
    expect(r("HTTP/1.1 200 OK\r\ncontent-length: 12").framing).toEqual({ kind: "length", length: 12 });
    expect(r("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked").framing).toEqual({ kind: "chunked" });
    expect(r("HTTP/1.1 200 OK").framing).toEqual({ kind: "close" });
  });

  it.each([
    ["both framings", "content-length: 3\r\ntransfer-encoding: chunked"],
    ["two lengths", "content-length: 3\r\ncontent-length: 4"],
    ["two equal lengths", "content-length: 3\r\ncontent-length: 3"],
    ["a coding other than chunked", "transfer-encoding: gzip"],
  ])("answers 502 for a response with %s", (_what, fields) => {
    const p = res(`HTTP/1.1 200 OK\r\n${fields}`);
    expect(status(() => responseFraming("GET", 200, p))).toBe(502);
  });

  it("answers 502 for Transfer-Encoding from an HTTP/1.0 upstream", () => {
    const p = res("HTTP/1.0 200 OK\r\ntransfer-encoding: chunked");
    expect(status(() => responseFraming("GET", 200, p))).toBe(502);
  });
});

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
