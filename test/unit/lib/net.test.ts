/** IP addresses and CIDRs parse and match across forms (IPv4-mapped folded); client IP trusts only proxy peers. */
import { describe, expect, it } from "bun:test";
import { CidrSet, cidrContains, clientIp, ipBytes, normalizeIp, parseCidr } from "../../../src/lib/net";

const bytes = (ip: string) => Array.from(ipBytes(ip) ?? []);

describe("ipBytes", () => {
  it("parses IPv4 to four bytes", () => {
    expect(bytes("192.168.1.20")).toEqual([192, 168, 1, 20]);
    expect(bytes("0.0.0.0")).toEqual([0, 0, 0, 0]);
    expect(bytes("255.255.255.255")).toEqual([255, 255, 255, 255]);
  });

  it("parses a full IPv6 address to sixteen bytes", () => {
    expect(bytes("2001:0db8:0000:0000:0000:0000:0000:0001")).toEqual([
      0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
    ]);
  });

  it("expands :: in any position", () => {
    expect(bytes("::")).toEqual(new Array(16).fill(0));
    expect(bytes("::1")).toEqual([...new Array(15).fill(0), 1]);
    expect(bytes("fe80::")).toEqual([0xfe, 0x80, ...new Array(14).fill(0)]);
    expect(bytes("2001:db8::8:800:200c:417a")).toEqual([
      0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0x08, 0x08, 0, 0x20, 0x0c, 0x41, 0x7a,
    ]);
  });

  it("accepts upper-case hex", () => {
    expect(bytes("2001:DB8::ABCD")).toEqual(bytes("2001:db8::abcd"));
  });

  it("reads an IPv4 address embedded at the end of an IPv6 address", () => {
    expect(bytes("64:ff9b::192.0.2.33")).toEqual([0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 192, 0, 2, 33]);
  });

  it("ignores a zone id", () => {
    expect(bytes("fe80::1%eth0")).toEqual(bytes("fe80::1"));
    expect(ipBytes("fe80::1%eth0")).toHaveLength(16);
  });

  it("folds IPv4-mapped IPv6 to the IPv4 address, in dotted and hex form", () => {
    expect(bytes("::ffff:10.1.2.3")).toEqual([10, 1, 2, 3]);
    expect(bytes("::FFFF:10.1.2.3")).toEqual([10, 1, 2, 3]);
    expect(bytes("::ffff:a01:203")).toEqual([10, 1, 2, 3]);
    expect(bytes("0:0:0:0:0:ffff:10.1.2.3")).toEqual([10, 1, 2, 3]);
  });

  it("does not fold IPv4-compatible or NAT64 addresses", () => {
    expect(ipBytes("::10.1.2.3")).toHaveLength(16);
    expect(ipBytes("64:ff9b::10.1.2.3")).toHaveLength(16);
  });

  it.each([
    "",
    "localhost",
    "1.2.3",
    "1.2.3.4.5",
    "256.1.1.1",
    "1.2.3.-1",
    "1.2.3.4 ",
    " 1.2.3.4",
    "1.2.3.4/8",
    "1.2.3.4:80",
    "1::2::3",
    "12345::1",
    "g::1",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7",
    "::ffff:256.1.1.1",
    "[::1]",
  ])("rejects %p", (text) => {
    expect(ipBytes(text)).toBeNull();
  });
});

describe("parseCidr", () => {
  it("parses an IPv4 network", () => {
    const c = parseCidr("10.0.0.0/8");
    expect(c && Array.from(c.bytes)).toEqual([10, 0, 0, 0]);
    expect(c?.bits).toBe(8);
  });

  it("treats a bare address as a single-host network", () => {
    expect(parseCidr("10.1.2.3")?.bits).toBe(32);
    expect(parseCidr("2001:db8::1")?.bits).toBe(128);
  });

  it("accepts the whole-space prefixes /0", () => {
    expect(parseCidr("0.0.0.0/0")?.bits).toBe(0);
    expect(parseCidr("::/0")?.bits).toBe(0);
  });

  it("ignores surrounding whitespace", () => {
    expect(parseCidr(" 10.0.0.0/8 ")?.bits).toBe(8);
  });

  it("keeps the IPv4 prefix of an IPv4-mapped network written in IPv6 form", () => {
    const c = parseCidr("::ffff:10.0.0.0/104");
    expect(c && Array.from(c.bytes)).toEqual([10, 0, 0, 0]);
    expect(c?.bits).toBe(8);
    expect(parseCidr("::ffff:0.0.0.0/96")?.bits).toBe(0);
    expect(parseCidr("::ffff:10.1.2.3")?.bits).toBe(32);
  });

  it.each([
    "10.0.0.0/33",
    "2001:db8::/129",
    "10.0.0.0/-1",
    "10.0.0.0/",
    "10.0.0.0/8/8",
    "10.0.0.0/a",
    "10.0.0.0/8.5",
    "10.0.0.0/0008",
    "/8",
    "not-an-ip/8",
    "::ffff:10.0.0.0/95",
    "",
  ])("rejects %p", (text) => {
    expect(parseCidr(text)).toBeNull();
  });
});

describe("cidrContains", () => {
  const has = (net: string, ip: string) => cidrContains(parseCidr(net)!, ipBytes(ip)!);

  it("matches addresses inside an IPv4 network and not outside it", () => {
    expect(has("10.0.0.0/8", "10.255.1.1")).toBe(true);
    expect(has("10.0.0.0/8", "11.0.0.0")).toBe(false);
    expect(has("192.168.1.0/24", "192.168.1.255")).toBe(true);
    expect(has("192.168.1.0/24", "192.168.2.0")).toBe(false);
  });

  it("compares prefixes that do not end on a byte boundary", () => {
    expect(has("172.16.0.0/12", "172.31.255.255")).toBe(true);
    expect(has("172.16.0.0/12", "172.32.0.0")).toBe(false);
    expect(has("172.16.0.0/12", "172.15.255.255")).toBe(false);
    expect(has("100.64.0.0/10", "100.127.0.1")).toBe(true);
    expect(has("100.64.0.0/10", "100.128.0.1")).toBe(false);
  });

  it("ignores host bits set in the network address", () => {
    expect(has("10.1.2.3/8", "10.9.9.9")).toBe(true);
  });

  it("matches a single host exactly", () => {
    expect(has("10.1.2.3", "10.1.2.3")).toBe(true);
    expect(has("10.1.2.3", "10.1.2.4")).toBe(false);
    expect(has("::1", "::1")).toBe(true);
    expect(has("::1", "::2")).toBe(false);
  });

  it("matches everything of its family with /0", () => {
    expect(has("0.0.0.0/0", "203.0.113.9")).toBe(true);
    expect(has("::/0", "2001:db8::1")).toBe(true);
  });

  it("never matches across address families", () => {
    expect(has("0.0.0.0/0", "2001:db8::1")).toBe(false);
    expect(has("::/0", "10.0.0.1")).toBe(false);
  });

  it("matches IPv6 networks", () => {
    expect(has("2001:db8::/32", "2001:db8:ffff::1")).toBe(true);
    expect(has("2001:db8::/32", "2001:db9::1")).toBe(false);
    expect(has("fe80::/10", "febf::1")).toBe(true);
    expect(has("fe80::/10", "fec0::1")).toBe(false);
  });

  it("matches an IPv4-mapped address against an IPv4 network and vice versa", () => {
    expect(has("10.0.0.0/8", "::ffff:10.2.3.4")).toBe(true);
    expect(has("::ffff:10.0.0.0/104", "10.2.3.4")).toBe(true);
    expect(has("::ffff:10.0.0.0/104", "11.2.3.4")).toBe(false);
  });
});

describe("CidrSet", () => {
  it("answers whether an address is in any of its networks", () => {
    const set = new CidrSet(["10.0.0.0/8", "192.168.0.0/16", "::1"]);
    expect(set.size).toBe(3);
    expect(set.has("10.1.1.1")).toBe(true);
    expect(set.has("192.168.7.7")).toBe(true);
    expect(set.has("::1")).toBe(true);
    expect(set.has("8.8.8.8")).toBe(false);
    expect(set.has("::2")).toBe(false);
  });

  it("answers no for anything when empty", () => {
    const set = new CidrSet([]);
    expect(set.size).toBe(0);
    expect(set.has("127.0.0.1")).toBe(false);
  });

  it("answers no for text that is not an address", () => {
    expect(new CidrSet(["0.0.0.0/0", "::/0"]).has("unknown")).toBe(false);
  });

  it("matches IPv4-mapped addresses against IPv4 entries", () => {
    expect(new CidrSet(["127.0.0.1"]).has("::ffff:127.0.0.1")).toBe(true);
  });

  it("refuses an entry that is not an address or CIDR, naming it", () => {
    expect(() => new CidrSet(["10.0.0.0/8", "10.0.0.0/40"])).toThrow("10.0.0.0/40");
    expect(() => new CidrSet(["proxy.internal"])).toThrow("proxy.internal");
  });
});

describe("normalizeIp", () => {
  it("writes an IPv4-mapped address as dotted IPv4", () => {
    expect(normalizeIp("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(normalizeIp("::FFFF:127.0.0.1")).toBe("127.0.0.1");
  });

  it("leaves plain IPv4 and IPv6 addresses as they are", () => {
    expect(normalizeIp("10.0.0.1")).toBe("10.0.0.1");
    expect(normalizeIp("2001:db8::1")).toBe("2001:db8::1");
  });

  // rate-limit and lockout keys must be the same for every spelling of one client
  it("writes every spelling of an IPv4-mapped address as the same dotted IPv4", () => {
    expect(normalizeIp("::ffff:7f00:1")).toBe("127.0.0.1");
    expect(normalizeIp("0:0:0:0:0:ffff:127.0.0.1")).toBe("127.0.0.1");
  });
});

describe("clientIp", () => {
  const proxies = new CidrSet(["10.0.0.0/8", "127.0.0.1"]);

  it("uses the peer address when there is no X-Forwarded-For", () => {
    expect(clientIp("10.0.0.5", null, proxies)).toBe("10.0.0.5");
    expect(clientIp("10.0.0.5", "", proxies)).toBe("10.0.0.5");
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", () => {
    expect(clientIp("203.0.113.7", "198.51.100.1", proxies)).toBe("203.0.113.7");
  });

  it("ignores X-Forwarded-For when no proxy is trusted", () => {
    expect(clientIp("10.0.0.5", "198.51.100.1", new CidrSet([]))).toBe("10.0.0.5");
  });

  it("takes the right-most hop from a trusted peer", () => {
    expect(clientIp("10.0.0.5", "198.51.100.1", proxies)).toBe("198.51.100.1");
  });

  it("does not believe a client-supplied left-most hop", () => {
    // the client sent "X-Forwarded-For: 1.1.1.1"; the proxy appended the real address
    expect(clientIp("10.0.0.5", "1.1.1.1, 198.51.100.1", proxies)).toBe("198.51.100.1");
  });

  it("walks back through a chain of trusted proxies to the first untrusted hop", () => {
    expect(clientIp("10.0.0.5", "1.1.1.1, 198.51.100.1, 10.0.0.9, 10.0.0.8", proxies)).toBe("198.51.100.1");
  });

  it("uses the left-most hop when every hop is a trusted proxy", () => {
    expect(clientIp("10.0.0.5", "10.0.0.7, 10.0.0.8", proxies)).toBe("10.0.0.7");
  });

  it("tolerates spacing around hops", () => {
    expect(clientIp("10.0.0.5", "  198.51.100.1 ,10.0.0.8  ", proxies)).toBe("198.51.100.1");
  });

  it("falls back to the peer when the right-most hop is garbage", () => {
    expect(clientIp("10.0.0.5", "198.51.100.1, not-an-ip", proxies)).toBe("10.0.0.5");
    expect(clientIp("10.0.0.5", "198.51.100.1:4000", proxies)).toBe("10.0.0.5");
    expect(clientIp("10.0.0.5", "unknown", proxies)).toBe("10.0.0.5");
  });

  it("falls back to the peer when garbage sits between trusted hops and the client", () => {
    expect(clientIp("10.0.0.5", "198.51.100.1, <script>, 10.0.0.8", proxies)).toBe("10.0.0.5");
  });

  it("falls back to the peer when the header holds only separators", () => {
    expect(clientIp("10.0.0.5", " , ,", proxies)).toBe("10.0.0.5");
  });

  it("treats an IPv4-mapped peer as its IPv4 address, for trust and for the answer", () => {
    expect(clientIp("::ffff:10.0.0.5", "198.51.100.1", proxies)).toBe("198.51.100.1");
    expect(clientIp("::ffff:203.0.113.7", "198.51.100.1", proxies)).toBe("203.0.113.7");
    expect(clientIp("::ffff:127.0.0.1", null, proxies)).toBe("127.0.0.1");
  });

  it("answers an IPv4-mapped hop as dotted IPv4", () => {
    expect(clientIp("10.0.0.5", "::ffff:198.51.100.1", proxies)).toBe("198.51.100.1");
  });

  it("handles IPv6 proxies and clients", () => {
    const v6 = new CidrSet(["fd00::/8"]);
    expect(clientIp("fd00::1", "2001:db8::7, fd00::2", v6)).toBe("2001:db8::7");
    expect(clientIp("2001:db8::9", "2001:db8::7", v6)).toBe("2001:db8::9");
  });
});
