import { describe, expect, it } from "bun:test";
import {
  BodyReader,
  FramingError,
  HeaderList,
  headEnd,
  parseRequestHead,
  parseResponseHead,
  requestFraming,
  responseFraming,
} from "../../../src/proxy/h1/framing";

const h = (...pairs: Array<[string, string]>) => new HeaderList(pairs);

function status(fn: () => unknown): number | null {
  try {
    fn();
    return null;
  } catch (e) {
    if (e instanceof FramingError) return e.status;
    throw e;
  }
}

describe("heads", () => {
  it("finds the end of a head and parses request lines and fields", () => {
    const raw = Buffer.from("GET /a?b=1 HTTP/1.1\r\nHost: x.test\r\nX-Two: a\r\nx-two: b\r\n\r\nrest");
    const end = headEnd(raw);
    expect(raw.subarray(end).toString()).toBe("rest");
    const head = parseRequestHead(raw.toString("latin1", 0, end - 4));
    expect(head).toMatchObject({ method: "GET", target: "/a?b=1", minor: 1 });
    expect(head.headers.get("host")).toBe("x.test");
    expect(head.headers.get("x-two")).toBe("a, b");
    expect(headEnd(Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n"))).toBe(-1);
  });

  it("refuses what parsers could read differently", () => {
    expect(status(() => parseRequestHead("GET / HTTP/1.1\r\nHost: a\r\n folded"))).toBe(400);
    expect(status(() => parseRequestHead("GET / HTTP/1.1\nHost: a"))).toBe(400);
    expect(status(() => parseRequestHead("GET /a b HTTP/1.1"))).toBe(400);
    expect(status(() => parseRequestHead("GET / HTTP/2.0"))).toBe(501);
    expect(status(() => parseRequestHead("GET / HTTP/1.1\r\nBad Name: x"))).toBe(400);
    expect(status(() => requestFraming(h(["content-length", "5"], ["transfer-encoding", "chunked"])))).toBe(400);
    expect(status(() => requestFraming(h(["content-length", "5"], ["content-length", "6"])))).toBe(400);
    expect(status(() => requestFraming(h(["content-length", "-1"])))).toBe(400);
    expect(status(() => requestFraming(h(["transfer-encoding", "gzip"])))).toBe(400);
    expect(status(() => requestFraming(h(["transfer-encoding", "gzip, chunked"])))).toBe(501);
    expect(requestFraming(h(["content-length", "5"], ["content-length", "5"]))).toEqual({ kind: "length", length: 5 });
  });

  it("parses status lines and picks response framing", () => {
    const r = parseResponseHead("HTTP/1.1 404 Not Found\r\ncontent-length: 3");
    expect(r).toMatchObject({ status: 404, reason: "Not Found", minor: 1 });
    expect(parseResponseHead("HTTP/1.0 200").reason).toBe("");
    expect(status(() => parseResponseHead("HTTP/1.1 2000 OK"))).toBe(502);
    expect(responseFraming("HEAD", 200, h(["content-length", "12"]))).toEqual({ kind: "none" });
    expect(responseFraming("GET", 304, h(["content-length", "12"]))).toEqual({ kind: "none" });
    expect(responseFraming("GET", 200, h(["content-length", "12"]))).toEqual({ kind: "length", length: 12 });
    expect(responseFraming("GET", 200, h(["transfer-encoding", "chunked"]))).toEqual({ kind: "chunked" });
    expect(responseFraming("GET", 200, h())).toEqual({ kind: "close" });
  });
});

describe("body reader", () => {
  it("counts a Content-Length body across chunks and stops at its end", () => {
    const r = new BodyReader({ kind: "length", length: 5 });
    expect(r.feed(Buffer.from("abc"))).toBe(3);
    expect(r.done).toBe(false);
    expect(r.feed(Buffer.from("deGET"))).toBe(2);
    expect(r.done).toBe(true);
  });

  it("follows chunked framing byte by byte, with extensions and trailers, and decodes when asked", () => {
    const wire = "4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\nNEXT";
    const whole = new BodyReader({ kind: "chunked" });
    expect(whole.feed(Buffer.from(wire))).toBe(wire.length - 4);
    expect(whole.done).toBe(true);
    const parts: string[] = [];
    const split = new BodyReader({ kind: "chunked" }, (b, s, e) => parts.push(b.toString("latin1", s, e)));
    let used = 0;
    for (const ch of wire) {
      if (split.done) break;
      used += split.feed(Buffer.from(ch));
    }
    expect(used).toBe(wire.length - 4);
    expect(parts.join("")).toBe("Wikipedia in\r\n\r\nchunks.");
  });

  it("refuses malformed chunked bodies", () => {
    for (const bad of ["x\r\n", "4\r\nWikiXX", "4\nWiki\r\n", "1234567890abc\r\n"]) {
      expect(status(() => new BodyReader({ kind: "chunked" }).feed(Buffer.from(bad)))).toBe(400);
    }
    expect(status(() => new BodyReader({ kind: "chunked" }, undefined, 502).feed(Buffer.from("zz\r\n")))).toBe(502);
  });
});
