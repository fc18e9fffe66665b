/** The webhook address policy: every refused block with its edges, public addresses allowed, IPv6 forms, allow_private. */
import { describe, expect, it } from "bun:test";
import { checkAddress, literalHost } from "../../../../src/modules/webhooks/address-policy";

const off = { allowPrivate: false };
const on = { allowPrivate: true };

describe("refused addresses", () => {
  it.each([
    ["0.0.0.0", "unspecified"],
    ["0.255.255.255", "unspecified"],
    ["10.0.0.0", "private"],
    ["10.255.255.255", "private"],
    ["100.64.0.0", "shared (cgnat)"],
    ["100.127.255.255", "shared (cgnat)"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["169.254.0.0", "link-local"],
    ["169.254.169.254", "link-local"],
    ["169.254.255.255", "link-local"],
    ["172.16.0.0", "private"],
    ["172.31.255.255", "private"],
    ["192.0.0.0", "ietf protocol assignment"],
    ["192.0.0.255", "ietf protocol assignment"],
    ["192.0.2.1", "documentation"],
    ["192.88.99.1", "6to4"],
    ["192.168.0.0", "private"],
    ["192.168.255.255", "private"],
    ["198.18.0.0", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
    ["198.51.100.7", "documentation"],
    ["203.0.113.9", "documentation"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.255", "multicast"],
    ["240.0.0.0", "reserved"],
    ["254.255.255.255", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["::7f00:1", "ipv4-compatible"],
    ["::8.8.8.8", "ipv4-compatible"],
    ["fe80::1", "link-local"],
    ["febf:ffff::1", "link-local"],
    ["fec0::1", "site-local"],
    ["fc00::1", "unique local"],
    ["fdff:ffff::1", "unique local"],
    ["ff02::1", "multicast"],
    ["ff0e::1", "multicast"],
    ["100::1", "discard-only"],
    ["64:ff9b:1::a00:1", "nat64 local use"],
    ["2001::1", "teredo"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"],
    ["2001:2::1", "ietf protocol assignment"],
    ["2001:1ff:ffff::1", "ietf protocol assignment"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2002:7f00:1::1", "6to4"],
    ["2002:808:808::1", "6to4"],
    ["4000::1", "not global unicast"],
    ["1fff:ffff::1", "not global unicast"],
    ["::ffff:0:7f00:1", "not global unicast"],
  ])("refuses %s (%s)", (ip, reason) => {
    expect(checkAddress(ip, off)).toMatchObject({ ok: false, reason });
  });

  it.each([
    ["::ffff:127.0.0.1", "127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "127.0.0.1", "loopback"],
    ["::ffff:10.1.2.3", "10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "169.254.169.254", "link-local"],
    ["0:0:0:0:0:ffff:c0a8:0101", "192.168.1.1", "private"],
  ])("judges IPv4-mapped %s as %s", (ip, address, reason) => {
    expect(checkAddress(ip, off)).toEqual({ ok: false, address, reason: reason as never });
  });

  it.each([
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b::127.0.0.1", "loopback"],
    ["64:ff9b::a9fe:a9fe", "link-local"],
    ["64:ff9b::c0a8:1", "private"],
  ])("judges NAT64 %s by its IPv4 address (%s)", (ip, reason) => {
    expect(checkAddress(ip, off)).toMatchObject({ ok: false, reason });
  });

  it("refuses scoped addresses and text that is not an address", () => {
    expect(checkAddress("fe80::1%eth0", off)).toMatchObject({ ok: false, reason: "scoped" });
    expect(checkAddress("2606:4700::1111%1", off)).toMatchObject({ ok: false, reason: "scoped" });
    for (const junk of ["0177.0.0.1", "0x7f.0.0.1", "2130706433", "127.1", "localhost", "", "1.2.3.4 "]) {
      expect(checkAddress(junk, off)).toMatchObject({ ok: false, reason: "not an ip address" });
    }
  });
});

describe("allowed addresses", () => {
  it.each([
    ["1.1.1.1", "1.1.1.1"],
    ["8.8.8.8", "8.8.8.8"],
    ["9.255.255.255", "9.255.255.255"],
    ["11.0.0.0", "11.0.0.0"],
    ["100.63.255.255", "100.63.255.255"],
    ["100.128.0.0", "100.128.0.0"],
    ["126.255.255.255", "126.255.255.255"],
    ["128.0.0.0", "128.0.0.0"],
    ["169.253.255.255", "169.253.255.255"],
    ["169.255.0.0", "169.255.0.0"],
    ["172.15.255.255", "172.15.255.255"],
    ["172.32.0.0", "172.32.0.0"],
    ["192.0.1.0", "192.0.1.0"],
    ["192.167.255.255", "192.167.255.255"],
    ["192.169.0.0", "192.169.0.0"],
    ["198.17.255.255", "198.17.255.255"],
    ["198.20.0.0", "198.20.0.0"],
    ["223.255.255.255", "223.255.255.255"],
    ["::ffff:8.8.8.8", "8.8.8.8"],
    ["64:ff9b::808:808", "64:ff9b:0:0:0:0:808:808"],
    ["2606:4700:4700::1111", "2606:4700:4700:0:0:0:0:1111"],
    ["2a00:1450:4001:80b::200e", "2a00:1450:4001:80b:0:0:0:200e"],
    ["2001:200::1", "2001:200:0:0:0:0:0:1"],
    ["2003::1", "2003:0:0:0:0:0:0:1"],
    ["3ffe::1", "3ffe:0:0:0:0:0:0:1"],
  ])("allows %s and dials %s", (ip, address) => {
    expect(checkAddress(ip, off)).toEqual({ ok: true, address });
  });
});

describe("allow_private_destinations", () => {
  it.each(["10.0.0.1", "172.16.5.5", "192.168.1.10", "127.0.0.1", "100.64.0.1", "::1", "fd12:3456::1", "::ffff:192.168.1.1"])(
    "lets %s through when on",
    (ip) => {
      expect(checkAddress(ip, on).ok).toBe(true);
      expect(checkAddress(ip, off).ok).toBe(false);
    },
  );

  it.each([
    "169.254.169.254",
    "fe80::1",
    "0.0.0.0",
    "::",
    "224.0.0.1",
    "255.255.255.255",
    "240.0.0.1",
    "192.0.2.1",
    "2001:db8::1",
  ])("still refuses %s when on", (ip) => {
    expect(checkAddress(ip, on).ok).toBe(false);
  });
});

describe("literal hosts of URLs", () => {
  it.each([
    ["http://2130706433/", "127.0.0.1"],
    ["http://0177.0.0.1/", "127.0.0.1"],
    ["http://0x7f.1/", "127.0.0.1"],
    ["http://0x7f000001/", "127.0.0.1"],
    ["http://017700000001/", "127.0.0.1"],
    ["http://127.1/", "127.0.0.1"],
    ["http://127.0.0.1./", "127.0.0.1"],
    ["http://%31%32%37.0.0.1/", "127.0.0.1"],
    ["http://①②⑦.0.0.1/", "127.0.0.1"],
    ["http://0/", "0.0.0.0"],
    ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"],
    ["http://[0:0:0:0:0:0:0:1]:8080/", "::1"],
    ["http://[64:ff9b::127.0.0.1]/", "64:ff9b::7f00:1"],
    ["http://example.com/", null],
    ["http://localhost/", null],
  ])("canonicalises %s to %s (the WHATWG parser) before the policy sees it", (url, literal) => {
    expect(literalHost(new URL(url))).toBe(literal);
    if (literal) expect(checkAddress(literal, off).ok).toBe(false);
  });

  it("refuses URLs with a zone id at parse time", () => {
    expect(() => new URL("http://[fe80::1%25eth0]/")).toThrow();
  });
});
