/** The response body decoder of the raw engine GET: chunked bodies cut at every byte, sized bodies, malformed sizes. */
import { describe, expect, it } from "bun:test";
import { BodyDecoder } from "../../../src/docker/raw-http";

const HEAD_CHUNKED = "HTTP/1.1 200 OK\r\nContent-Type: application/x-tar\r\nTransfer-Encoding: chunked";

function decode(head: string, parts: Uint8Array[]): { text: string; done: boolean } {
  const d = new BodyDecoder();
  d.configure(head);
  let text = "";
  for (const p of parts) d.push(p, (b) => (text += new TextDecoder().decode(b)));
  return { text, done: d.done };
}

describe("BodyDecoder", () => {
  const wire = new TextEncoder().encode("5\r\nhello\r\n1;ext=1\r\n \r\n6\r\nworld!\r\n0\r\nTrailer: x\r\n\r\n");

  it("decodes a chunked body whole and cut at every byte", () => {
    expect(decode(HEAD_CHUNKED, [wire])).toEqual({ text: "hello world!", done: true });
    for (let cut = 1; cut < wire.length; cut++) {
      expect(decode(HEAD_CHUNKED, [wire.subarray(0, cut), wire.subarray(cut)])).toEqual({ text: "hello world!", done: true });
    }
    const bytes = [...wire].map((b) => new Uint8Array([b]));
    expect(decode(HEAD_CHUNKED, bytes)).toEqual({ text: "hello world!", done: true });
  });

  it("stops at Content-Length and reads to the end without framing", () => {
    const body = new TextEncoder().encode("abcdefXYZ");
    expect(decode("HTTP/1.1 404 Not Found\r\nContent-Length: 6", [body])).toEqual({ text: "abcdef", done: true });
    expect(decode("HTTP/1.1 200 OK", [body])).toEqual({ text: "abcdefXYZ", done: false });
  });

  it("refuses a malformed chunk size", () => {
    expect(() => decode(HEAD_CHUNKED, [new TextEncoder().encode("zz\r\nhello")])).toThrow(/chunk size/);
  });
});
