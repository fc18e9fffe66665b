/** App status from containers, stop flag, last deploy and engine; logs `since` as a duration or an RFC 3339 time. */
import { describe, expect, it } from "bun:test";
import type { ContainerSummary } from "../../../../src/docker/types";
import type { AppRow } from "../../../../src/modules/apps/repo";
import { deriveStatus } from "../../../../src/modules/apps/status";

const app = (over: Partial<AppRow> = {}): AppRow => ({
  id: 1,
  slug: "blog",
  stopped: false,
  scaleJson: "{}",
  currentVersionId: 1,
  attemptedVersionId: 1,
  lastDeployStatus: "succeeded",
  lastError: null,
  removedAt: null,
  createdAt: "",
  updatedAt: "",
  ...over,
});

const c = (state: string, status = "Up 1 minute", health: string | null = null): ContainerSummary => ({
  id: Math.random().toString(16).slice(2),
  name: "x",
  image: "i",
  state,
  status,
  health,
  labels: {},
  service: "web",
  project: "sundeck-blog",
  number: 1,
  networks: {},
  ports: [],
  createdAt: 0,
});

describe("app status", () => {
  it.each([
    ["running when every container runs", app(), [c("running"), c("running", "Up", "healthy")], "running"],
    ["degraded when some do not", app(), [c("running"), c("exited", "Exited (1) 2 seconds ago")], "degraded"],
    ["degraded with an unhealthy container", app(), [c("running"), c("running", "Up (unhealthy)", "unhealthy")], "degraded"],
    ["failed when none run", app(), [c("exited", "Exited (1) 2 seconds ago")], "failed"],
    ["stopped when every container exited cleanly", app(), [c("exited", "Exited (0) 2 seconds ago")], "stopped"],
    [
      "failed when a container was killed and none run",
      app(),
      [c("exited", "Exited (137) 1 second ago"), c("exited", "Exited (0) 1 second ago")],
      "failed",
    ],
    ["stopped when the user stopped it", app({ stopped: true }), [c("exited", "Exited (137) 1 second ago")], "stopped"],
    ["stopped with no containers after a good deploy", app(), [], "stopped"],
    ["failed with no containers after a failed deploy", app({ lastDeployStatus: "failed" }), [], "failed"],
    ["running when a finished job exited 0", app(), [c("running"), c("exited", "Exited (0) 1 minute ago")], "running"],
    ["removed when its directory went", app({ removedAt: "x" }), [], "removed"],
  ] as const)("is %s", (_n, a, cs, want) => {
    expect(deriveStatus(a as AppRow, [...cs], false, true)).toBe(want);
  });

  it("is deploying while an operation runs, and unknown without an engine", () => {
    expect(deriveStatus(app(), [c("running")], true, true)).toBe("deploying");
    expect(deriveStatus(app(), [], false, false)).toBe("unknown");
  });
});
