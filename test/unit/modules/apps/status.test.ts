/** App status from containers, stop flag, last deploy and engine; logs `since` as a duration or an RFC 3339 time. */
import { describe, expect, it } from "bun:test";
import type { ContainerSummary, Engine } from "../../../../src/docker/types";
import { LogSink } from "../../../../src/log/logger";
import type { AppRow } from "../../../../src/modules/apps/repo";
import { deriveStatus, StatusBoard } from "../../../../src/modules/apps/status";
import { until } from "../../../helpers/http";

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
  templateJson: null,
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

describe("the status board's refreshes", () => {
  /** An engine whose listing is `world`, recording each call (null: every container). */
  function fakeEngine(world: Map<string, ContainerSummary[]>) {
    const calls: (string | null)[] = [];
    let gate: Promise<void> | null = null;
    const engine = {
      async containers(f: { project?: string; labels?: string[] } = {}) {
        calls.push(f.project ?? null);
        if (gate) await gate;
        return f.project ? [...(world.get(f.project) ?? [])] : [...world.values()].flat();
      },
    } as unknown as Engine;
    return { engine, calls, hold: (p: Promise<void> | null) => (gate = p) };
  }
  const inProject = (project: string, service: string, number: number): ContainerSummary => ({
    ...c("running"),
    project,
    service,
    number,
  });
  const log = new LogSink({ stdout: false }).logger("status");

  it("reads only the projects that had events, and everything past 8 of them", async () => {
    const world = new Map([
      ["sundeck-a", [inProject("sundeck-a", "web", 1)]],
      ["sundeck-b", [inProject("sundeck-b", "web", 1)]],
    ]);
    const f = fakeEngine(world);
    const board = new StatusBoard(() => f.engine, log, { debounceMs: 5 });
    await board.refresh();
    expect(f.calls).toEqual([null]);
    world.set("sundeck-a", [inProject("sundeck-a", "web", 2), inProject("sundeck-a", "web", 1)]);
    world.delete("sundeck-b");
    board.poke("sundeck-a");
    board.poke("sundeck-b");
    board.poke("sundeck-a");
    await until(() => board.generation === 2, { timeout: 2000 });
    expect(f.calls).toEqual([null, "sundeck-a", "sundeck-b"]);
    expect(board.containers("a").map((x) => x.number)).toEqual([1, 2]);
    expect(board.containers("b")).toEqual([]);
    // the confirming pass a second later reads the same projects once more
    await until(() => board.generation === 3, { timeout: 3000 });
    expect(f.calls.slice(3).sort()).toEqual(["sundeck-a", "sundeck-b"]);
    for (let i = 0; i < 9; i++) board.poke(`sundeck-p${i}`);
    await until(() => board.generation === 4, { timeout: 2000 });
    expect(f.calls.at(-1)).toBeNull();
    board.stop();
  });

  it("serves an ask made while a read runs with the next read, which the promise awaits", async () => {
    const world = new Map([["sundeck-a", [inProject("sundeck-a", "web", 1)]]]);
    const f = fakeEngine(world);
    const board = new StatusBoard(() => f.engine, log);
    let open = () => {};
    f.hold(new Promise<void>((r) => (open = r)));
    const first = board.refresh();
    world.set("sundeck-a", [inProject("sundeck-a", "web", 1), inProject("sundeck-a", "web", 2)]);
    const second = board.refresh();
    f.hold(null);
    open();
    await second;
    await first;
    expect(f.calls).toEqual([null, null]);
    expect(board.containers("a")).toHaveLength(2);
  });
});
