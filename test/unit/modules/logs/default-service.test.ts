/** The default service of a logs stream that names none: web, else the only service, else the first routed one. */
import { describe, expect, it } from "bun:test";
import { defaultService } from "../../../../src/modules/logs/default-service";

describe("defaultService", () => {
  it.each([
    ["web when the app has it, routed or not", ["worker", "web"], ["worker"], "web"],
    ["the only service", ["worker"], [], "worker"],
    ["the first routed service in compose order", ["worker", "api", "admin"], ["admin", "api"], "api"],
    ["none among several unrouted services", ["worker", "cron"], [], null],
    ["web when nothing is known of the app", [], [], "web"],
  ])("picks %s", (_what, services, routed, want) => {
    expect(defaultService(services, routed)).toBe(want);
  });
});
