/** The new-app page's example compose file: what a newcomer copies must deploy as it is, behind the proxy. */
import { describe, expect, it } from "bun:test";
import { prepare } from "../../../../../src/compose/prepare";
import { COMPOSE_PLACEHOLDER } from "../../../../../src/dashboard/pages/apps/NewAppPage";
import { composeProblems } from "../../../../../src/dashboard/pages/apps/validate";

const policy = { appDir: "/tmp/apps/hello", appsDir: "/tmp/apps", dataDir: "/tmp/data", allowedHostPaths: [] };

describe("the new-app placeholder", () => {
  it("passes the browser's checks and the server's safety rules", () => {
    expect(composeProblems(COMPOSE_PLACEHOLDER)).toEqual([]);
    expect(() => prepare(COMPOSE_PLACEHOLDER, "", policy)).not.toThrow();
  });

  it("is a routed service, not a published host port the proxy may hold", () => {
    const p = prepare(COMPOSE_PLACEHOLDER, "", policy);
    expect(p.routed).toEqual(["web"]);
    expect(p.project.services[0].ports ?? []).toEqual([]);
    expect(COMPOSE_PLACEHOLDER).not.toContain("ports:");
    expect(COMPOSE_PLACEHOLDER).not.toMatch(/image: \S+:latest|image: [^:\s]+\s/);
  });
});
