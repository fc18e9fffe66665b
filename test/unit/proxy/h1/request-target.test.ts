/** A request is addressed by one valid Host or an absolute-form authority, which wins; anything else is a 400. */
import { describe, expect, it } from "bun:test";
import { parseRequestHead } from "../../../../src/proxy/h1/framing";
import { requestTarget, validAuthority } from "../../../../src/proxy/h1/request-target";
import { framingStatus as status } from "../../../helpers/proxy";

const req = (head: string) => parseRequestHead(head);

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
