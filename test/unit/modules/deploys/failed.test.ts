/** The one-line error of a failed compose command: the line of its output that says why, for v1 and v2 alike. */
import { describe, expect, it } from "bun:test";
import { causeLine, failed } from "../../../../src/modules/deploys/compose-run";

const ID = "1cb054a6d84d1cda1988fbac954d9fa083ca9f30722fff400a849eb4df3172a3";
const BIND = "Error starting userland proxy: listen tcp4 127.0.0.1:18999: bind: address already in use";

// what compose printed on this machine for a published port another program holds
const V1 = `Creating network "pctest_default" with the default driver
Creating pctest_other_1 ...
Creating pctest_web_1   ...
Host is already in use by another container
Creating pctest_web_1   ... error

ERROR: for pctest_web_1  Cannot start service web: driver failed programming external connectivity on endpoint pctest_web_1 (${ID}): ${BIND}
Creating pctest_other_1 ... done

ERROR: for web  Cannot start service web: driver failed programming external connectivity on endpoint pctest_web_1 (${ID}): ${BIND}
Encountered errors while bringing up the project.
`;
const V2 = ` Network pctest2_default  Created
 Container pctest2-web-1  Starting
 Container pctest2-other-1  Started
Error response from daemon: driver failed programming external connectivity on endpoint pctest2-web-1 (${ID}): ${BIND}
`;

describe("the cause of a failed compose command", () => {
  const cases: Array<[string, string, string]> = [
    [
      "v1: the service's ERROR line, not the generic summary",
      V1,
      `Cannot start service web: driver failed programming external connectivity on endpoint pctest_web_1: ${BIND}`,
    ],
    [
      "v2: the daemon's error line",
      V2,
      `Error response from daemon: driver failed programming external connectivity on endpoint pctest2-web-1: ${BIND}`,
    ],
    [
      "an error line followed by progress",
      "ERROR: manifest for x:1 not found\nPulling web ... done\n",
      "ERROR: manifest for x:1 not found",
    ],
    ["no error line: the last line", "line one\nsomething odd happened\n", "something odd happened"],
    [
      "only the generic summary: kept, there is nothing better",
      "Encountered errors while bringing up the project.\n",
      "Encountered errors while bringing up the project.",
    ],
    ["nothing printed", "", ""],
  ];
  for (const [name, output, want] of cases) it(name, () => expect(causeLine(output)).toBe(want));

  it("is capped at 300 characters", () => expect(causeLine(`Error: ${"x".repeat(1000)}`)).toHaveLength(300));

  it("says what to do when Docker has no address range left for a network", () => {
    const out = `Creating network "sundeck-app29_default" with the default driver
ERROR: could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the network
`;
    const text = failed({ code: 1, output: out, killed: false }, "compose up");
    expect(text).toStartWith("compose up failed (exit 1): ERROR: could not find an available, non-overlapping IPv4 address pool");
    expect(text).toContain(
      "set docker.subnet_pool in Sundeck's config, or give dockerd smaller subnets with default-address-pools",
    );
    expect(failed({ code: 1, output: V2, killed: false }, "compose up")).not.toContain("daemon.json");
  });

  it("reads as what failed, the exit code and the cause", () => {
    expect(failed({ code: 1, output: V1, killed: false }, "compose up")).toBe(
      `compose up failed (exit 1): Cannot start service web: driver failed programming external connectivity on endpoint pctest_web_1: ${BIND}`,
    );
    expect(failed({ code: 1, output: "", killed: false }, "compose up")).toBe("compose up failed (exit 1)");
    expect(failed({ code: 130, output: V2, killed: true }, "compose up")).toBe("cancelled");
  });
});
