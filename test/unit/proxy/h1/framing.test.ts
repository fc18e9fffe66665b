/** Heads parse as strictly as llhttp, and framing refuses every ambiguous message length with the right status. */
import { describe, expect, it } from "bun:test";
import { headEnd, parseRequestHead, parseResponseHead, requestFraming, responseFraming } from "../../../../src/proxy/h1/framing";
import { framingStatus as status } from "../../../helpers/proxy";

const req = (head: string) => parseRequestHead(head);

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
