/** The plain listener reads the host of a request from Host without its port, and refuses junk. */
import { describe, expect, it } from "bun:test";
import { hostOnly } from "../../../src/proxy/listeners-plain";

describe("plain listener helpers", () => {
  it("strips the port from Host and refuses junk", () => {
    expect(hostOnly("Example.com:8080")).toBe("example.com");
    expect(hostOnly("example.com")).toBe("example.com");
    expect(hostOnly("[::1]:80")).toBe("[::1]");
    expect(hostOnly(null)).toBeNull();
    expect(hostOnly("evil.com/x")).toBeNull();
    expect(hostOnly("a b")).toBeNull();
  });
});
