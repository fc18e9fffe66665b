/** The pure parts of `sundeck doctor`: which listeners a config opens, address parsing, the probe guard. */
import { describe, expect, test } from "bun:test";
import { portSpecs } from "../../../src/cli/doctor";
import { guarded } from "../../../src/cli/doctor/check";
import { parseListenAddr } from "../../../src/cli/doctor/ports";
import { type Config, defaults } from "../../../src/config/schema";

const config = (over: Partial<Config>): Config => ({ ...defaults(), master_secret: "x".repeat(16), ...over });

describe("doctor ports", () => {
  test("the SPEC defaults (tls auto): 443, 80 on every interface, the management port on loopback", () => {
    expect(portSpecs(config({}))).toEqual([
      { label: "https", host: "", port: 443 },
      { label: "http", host: "", port: 80 },
      { label: "management", host: "127.0.0.1", port: 8443 },
    ]);
  });

  test("tls off: one proxy listener, no plain one; management on every interface; port 0 is not checked", () => {
    const tls = { ...defaults().tls, mode: "off" as const };
    expect(portSpecs(config({ tls, listen_addr: ":8080", management_addr: "0.0.0.0" }))).toEqual([
      { label: "proxy", host: "", port: 8080 },
      { label: "management", host: "", port: 8443 },
    ]);
    expect(portSpecs(config({ tls, listen_addr: ":8080", management_port: 0 }))).toEqual([
      { label: "proxy", host: "", port: 8080 },
    ]);
  });

  test("an explicit http_listen_addr, and the same address twice checked once", () => {
    const specs = portSpecs(config({ http_listen_addr: "127.0.0.1:8443" }));
    expect(specs).toEqual([
      { label: "https", host: "", port: 443 },
      { label: "http", host: "127.0.0.1", port: 8443 },
    ]);
  });

  test("listen addresses", () => {
    expect(parseListenAddr(":443")).toEqual({ host: "", port: 443 });
    expect(parseListenAddr("*:80")).toEqual({ host: "", port: 80 });
    expect(parseListenAddr("127.0.0.1:8080")).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(parseListenAddr("[::1]:443")).toEqual({ host: "::1", port: 443 });
  });
});

describe("doctor probe guard", () => {
  test("a throw becomes a fail with the message, a hang becomes the timeout status", async () => {
    expect(await guarded("x", () => Promise.reject(new Error("boom\nstack")))).toEqual([
      { name: "x", status: "fail", detail: "boom" },
    ]);
    const t0 = performance.now();
    expect(await guarded("y", () => new Promise(() => {}), 50, "fail")).toEqual([
      { name: "y", status: "fail", detail: "no answer within 0.05s" },
    ]);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
