/** Client connections are capped in total and per address (an IPv6 /64 is one); exempt peers skip only the latter. */
import { describe, expect, it } from "bun:test";
import { LogSink } from "../../../../src/log/logger";
import { ConnectionCaps } from "../../../../src/proxy/h1/caps";

const log = new LogSink({ stdout: false }).logger("proxy");

describe("connection caps", () => {
  it("counts per address and in total, and frees a slot on release", () => {
    const caps = new ConnectionCaps({ maxConnections: 3, maxConnectionsPerIp: 2, log });
    expect(caps.reserve("203.0.113.1")).toBe(true);
    expect(caps.reserve("::ffff:203.0.113.1")).toBe(true);
    expect(caps.reserve("203.0.113.1")).toBe(false);
    expect(caps.reserve("203.0.113.2")).toBe(true);
    expect(caps.reserve("203.0.113.3")).toBe(false);
    caps.release("203.0.113.1");
    expect(caps.size).toBe(2);
    expect(caps.reserve("203.0.113.1")).toBe(true);
  });

  it("counts an IPv6 /64 as one peer", () => {
    const caps = new ConnectionCaps({ maxConnections: 100, maxConnectionsPerIp: 2, log });
    expect(caps.reserve("2001:db8:1:2::1")).toBe(true);
    expect(caps.reserve("2001:db8:1:2:ffff::9")).toBe(true);
    expect(caps.reserve("2001:db8:1:2::77")).toBe(false);
    expect(caps.reserve("2001:db8:1:3::1")).toBe(true);
  });

  it("lets exempt peers past the per-address cap, never past the total", () => {
    const caps = new ConnectionCaps({ maxConnections: 3, maxConnectionsPerIp: 1, exempt: (p) => p === "10.0.0.1", log });
    expect([caps.reserve("10.0.0.1"), caps.reserve("10.0.0.1"), caps.reserve("10.0.0.1")]).toEqual([true, true, true]);
    expect(caps.reserve("10.0.0.1")).toBe(false);
  });
});
