/** Listen addresses parse as host:port (IPv6 bracketed, empty or * meaning all), and malformed ones are refused. */
import { describe, expect, it } from "bun:test";
import { parseListenAddr } from "../../../src/proxy/listeners";

describe("listen addresses", () => {
  it.each([
    [":443", "0.0.0.0", 443],
    ["*:80", "0.0.0.0", 80],
    ["127.0.0.1:8443", "127.0.0.1", 8443],
    ["[::1]:443", "::1", 443],
    ["[::]:0", "::", 0],
  ])("parses %s", (addr, hostname, p) => {
    expect(parseListenAddr(addr)).toEqual({ hostname, port: p });
  });

  it("rejects malformed listen addresses", () => {
    for (const bad of ["443", ":99999", "host:x"]) expect(() => parseListenAddr(bad)).toThrow();
  });
});
