/** Host names normalise to one form: lower case, no port or trailing dot, IPv6 compressed, IPv4-mapped unwrapped. */
import { describe, expect, it } from "bun:test";
import { normalizeHost } from "../../../src/proxy/hosts";

describe("host names", () => {
  it("normalises hosts", () => {
    expect(normalizeHost("example.com")).toBe("example.com");
    expect(normalizeHost("Example.COM:8080")).toBe("example.com");
    expect(normalizeHost("example.com.")).toBe("example.com");
    expect(normalizeHost("[::1]:443")).toBe("::1");
    expect(normalizeHost("[::FFFF:10.0.0.1]")).toBe("10.0.0.1");
    expect(normalizeHost("[2001:0DB8:0000:0000:0000:0000:0000:0001]")).toBe("2001:db8::1");
    expect(normalizeHost("[2001:db8:0:1:0:0:0:1]")).toBe("2001:db8:0:1::1");
    expect(normalizeHost("10.0.0.1:80")).toBe("10.0.0.1");
  });
});
