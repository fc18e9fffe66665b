import { describe, expect, test } from "bun:test";
import { isIP } from "node:net";
import { ipKind, quickTestHost } from "../../../src/shared/quickhost";

describe("quickTestHost", () => {
  test("an IPv4 public host gives <slug>.<ip>.sslip.io", () => {
    expect(quickTestHost("gitea", "203.0.113.7")).toBe("gitea.203.0.113.7.sslip.io");
  });
  test("an IPv6 one is written with dashes, brackets or not", () => {
    expect(quickTestHost("blog", "2001:db8::1")).toBe("blog.2001-db8--1.sslip.io");
    expect(quickTestHost("blog", "[2001:db8::1]")).toBe("blog.2001-db8--1.sslip.io");
  });
  test("a name or nothing gives null (the quick test needs an address)", () => {
    expect(quickTestHost("blog", "")).toBeNull();
    expect(quickTestHost("blog", "example.com")).toBeNull();
    expect(quickTestHost("blog", "203.0.113")).toBeNull();
  });
});

describe("ipKind agrees with node's isIP", () => {
  test("except that a zone id is refused (a link-local address is no public host)", () => {
    expect(isIP("fe80::1%eth0")).toBe(6);
    expect(ipKind("fe80::1%eth0")).toBe(0);
  });
  const cases = [
    "0.0.0.0",
    "255.255.255.255",
    "256.1.1.1",
    "01.2.3.4",
    "1.2.3",
    "1.2.3.4.5",
    "::",
    "::1",
    "2001:db8::1",
    "2001:db8:0:0:0:0:0:1",
    "::ffff:192.0.2.1",
    "2001:db8::1::2",
    "2001:db8:::1",
    "12345::1",
    "g::1",
    "1:2:3:4:5:6:7:8",
    "1:2:3:4:5:6:7:8:9",
    ":1",
    "1:",
    "example.com",
    "",
    "1.2.3.4 ",
  ];
  for (const c of cases)
    test(JSON.stringify(c), () => {
      expect(ipKind(c)).toBe(isIP(c) as 0 | 4 | 6);
    });
});
