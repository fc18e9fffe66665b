/** Port mappings parse as compose reads them (addresses, ranges, protocols), refuse the malformed, and format back. */
import { describe, expect, it } from "bun:test";
import type { PortSpec } from "../../../src/compose/model";
import { formatPort, parsePort } from "../../../src/compose/ports";

const spec = (hostIp: string, published: string, target: string, protocol: PortSpec["protocol"] = "tcp"): PortSpec => ({
  hostIp,
  published,
  target,
  protocol,
});

describe("parsePort", () => {
  it.each([
    [80, spec("", "", "80")],
    ["80", spec("", "", "80")],
    ["80/udp", spec("", "", "80", "udp")],
    ["80/SCTP", spec("", "", "80", "sctp")],
    ["8080:80", spec("", "8080", "80")],
    ["8080:80/tcp", spec("", "8080", "80")],
    ["8080:80/udp", spec("", "8080", "80", "udp")],
    [":80", spec("", "", "80")],
    ["127.0.0.1:8080:80", spec("127.0.0.1", "8080", "80")],
    ["0.0.0.0:8080:80", spec("0.0.0.0", "8080", "80")],
    ["127.0.0.1::80", spec("127.0.0.1", "", "80")],
    ["[::1]:8080:80", spec("::1", "8080", "80")],
    ["[::]:8080:80/udp", spec("::", "8080", "80", "udp")],
    ["::1:8080:80", spec("::1", "8080", "80")],
    ["8080-8081:80-81", spec("", "8080-8081", "80-81")],
    ["127.0.0.1:8080-8081:80-81/udp", spec("127.0.0.1", "8080-8081", "80-81", "udp")],
    ["9000-9010:80", spec("", "9000-9010", "80")],
    ["80-81", spec("", "", "80-81")],
    [" 8080:80 ", spec("", "8080", "80")],
    [{ target: 80 }, spec("", "", "80")],
    [{ target: 80, published: 8080 }, spec("", "8080", "80")],
    [{ target: 80, published: "8080" }, spec("", "8080", "80")],
    [{ target: 80, published: "8080-8081", protocol: "udp" }, spec("", "8080-8081", "80", "udp")],
    [{ target: "80", published: 8080, host_ip: "0.0.0.0", mode: "host" }, spec("0.0.0.0", "8080", "80")],
    [{ target: 80, published: 8080, host_ip: "::1" }, spec("::1", "8080", "80")],
    [{ target: 80, published: 8080, host_ip: "[::1]" }, spec("::1", "8080", "80")],
    [{ target: 80, published: null, host_ip: null }, spec("", "", "80")],
  ] as const)("normalises %j", (raw, expected) => {
    expect(parsePort("web", raw)).toEqual(expected);
  });

  it.each([
    ["http"],
    ["80:http"],
    ["0"],
    ["70000"],
    ["8080:0"],
    ["81-80"],
    ["8080-8082:80-81"],
    ["8080:80-81"],
    ["80/icmp"],
    ["localhost:8080:80"],
    ["300.0.0.1:8080:80"],
    [{ published: 8080 }],
    [{ target: 80, published: "x" }],
    [{ target: 80, host_ip: "example.com" }],
    [["80"]],
    [true],
  ] as const)("rejects %j naming the service", (raw) => {
    let err: any;
    try {
      parsePort("web", raw);
    } catch (e) {
      err = e;
    }
    expect(err?.service).toBe("web");
    expect(err?.rule).toBe("schema");
    expect(err?.message).toContain("invalid port");
  });
});

describe("formatPort", () => {
  it.each([
    [spec("", "8080", "80"), "127.0.0.1:8080:80"],
    [spec("", "", "80"), "127.0.0.1::80"],
    [spec("", "8080", "80", "udp"), "127.0.0.1:8080:80/udp"],
    [spec("0.0.0.0", "8080", "80"), "0.0.0.0:8080:80"],
    [spec("::1", "8080", "80"), "[::1]:8080:80"],
    [spec("::", "", "80"), "[::]::80"],
    [spec("", "8080-8081", "80-81"), "127.0.0.1:8080-8081:80-81"],
  ])("writes %j bound to loopback by default as %s", (p, out) => {
    expect(formatPort(p, "127.0.0.1")).toBe(out);
  });

  it("writes the mapping as given when no default interface is asked for", () => {
    expect(formatPort(spec("", "8080", "80"))).toBe("8080:80");
    expect(formatPort(spec("", "", "80", "udp"))).toBe("80/udp");
    expect(formatPort(spec("10.0.0.1", "8080", "80"))).toBe("10.0.0.1:8080:80");
  });

  it("round-trips through parsePort", () => {
    for (const raw of ["127.0.0.1:8080:80", "[::1]:8080-8081:80-81/udp", "0.0.0.0::53/udp"]) {
      expect(formatPort(parsePort("web", raw), "127.0.0.1")).toBe(raw);
    }
  });
});
