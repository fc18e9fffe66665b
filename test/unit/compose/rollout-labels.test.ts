import { describe, expect, test } from "bun:test";
import { ComposeError } from "../../../src/compose/model";
import { chooseStrategy, rolloutSettings } from "../../../src/compose/rollout-labels";

const svc = (labels: Record<string, string>, over: Record<string, unknown> = {}) => ({
  name: "web",
  labels,
  ports: [] as Array<{ hostIp: string; published: string; target: string; protocol: "tcp" }>,
  containerName: null,
  networkMode: null,
  ...over,
});

describe("rolloutSettings", () => {
  test("defaults: no strategy asked, drain 30 s, probe every 1 s with a 2 s timeout, no path", () => {
    expect(rolloutSettings(svc({}))).toEqual({
      strategy: null,
      drainMs: 30_000,
      probe: { path: null, intervalMs: 1000, timeoutMs: 2000 },
    });
  });
  test("reads each label", () => {
    const s = rolloutSettings(
      svc({
        "sundeck.deploy.strategy": "Recreate",
        "sundeck.deploy.drain_timeout": "5s",
        "sundeck.healthcheck.path": "/health?deep=1",
        "sundeck.healthcheck.interval": "500ms",
        "sundeck.healthcheck.timeout": "3s",
      }),
    );
    expect(s).toEqual({
      strategy: "recreate",
      drainMs: 5000,
      probe: { path: "/health?deep=1", intervalMs: 500, timeoutMs: 3000 },
    });
  });
  const bad: Array<[string, string]> = [
    ["sundeck.deploy.strategy", "blue-green"],
    ["sundeck.deploy.drain_timeout", "11m"],
    ["sundeck.deploy.drain_timeout", "soon"],
    ["sundeck.healthcheck.interval", "10ms"],
    ["sundeck.healthcheck.timeout", "1h"],
    ["sundeck.healthcheck.path", "health"],
    ["sundeck.healthcheck.path", "//evil.example/x"],
    ["sundeck.healthcheck.path", "/a b"],
    ["sundeck.healthcheck.path", "/../x"],
    ["sundeck.healthcheck.path", "/x\r\nHost: y"],
  ];
  for (const [label, value] of bad)
    test(`refuses ${label}: ${JSON.stringify(value)}, naming the label`, () => {
      let err: unknown;
      try {
        rolloutSettings(svc({ [label]: value }));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ComposeError);
      expect((err as Error).message).toContain(label);
    });
});

describe("chooseStrategy", () => {
  test("rolling for a routed service with nothing in the way", () => {
    expect(chooseStrategy(svc({}), true).strategy).toBe("rolling");
  });
  test("recreate, with the reason, for each fallback", () => {
    const reason = (s: ReturnType<typeof svc>, routed = true) => {
      const c = chooseStrategy(s, routed);
      expect(c.strategy).toBe("recreate");
      return c.reason;
    };
    expect(reason(svc({}), false)).toContain("no endpoints");
    expect(reason(svc({}, { containerName: "web" }))).toContain("container_name");
    expect(reason(svc({}, { ports: [{ hostIp: "", published: "8080", target: "80", protocol: "tcp" }] }))).toContain("host port");
    expect(reason(svc({}, { networkMode: "host" }))).toContain("network_mode");
    expect(reason(svc({ "sundeck.deploy.strategy": "recreate" }))).toBe("sundeck.deploy.strategy is recreate");
  });
  test("an ephemeral host port (compose picks one per container) does not stop a rolling deploy", () => {
    expect(
      chooseStrategy(svc({}, { ports: [{ hostIp: "", published: "", target: "80", protocol: "tcp" }] }), true).strategy,
    ).toBe("rolling");
  });
});
