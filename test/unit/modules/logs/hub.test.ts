/** The log hub on a scripted engine: one follow per container for every viewer, retries, truthful ends, lingering. */
import { describe, expect, it } from "bun:test";
import { LogSink } from "../../../../src/log/logger";
import type { FeedEnd, FeedViewer } from "../../../../src/modules/logs/feed";
import { createLogHub } from "../../../../src/modules/logs/hub";
import type { HubLine } from "../../../../src/modules/logs/ring";
import { at, ScriptedEngine } from "../../../helpers/fake-engine";
import { until } from "../../../helpers/http";

class Collect implements FeedViewer {
  lines: string[] = [];
  ended: FeedEnd | null = null;
  line(l: HubLine) {
    this.lines.push(l.line);
  }
  end(e: FeedEnd) {
    this.ended = e;
  }
}

function setup(o: { giveUpMs?: number; lingerMs?: number } = {}) {
  const engine = new ScriptedEngine();
  const hub = createLogHub({
    engine: () => engine.asEngine(),
    log: new LogSink({ stdout: false }).logger("logs"),
    retryMs: 5,
    retryMaxMs: 20,
    giveUpMs: o.giveUpMs ?? 10_000,
    lingerMs: o.lingerMs ?? 50,
  });
  return { engine, hub };
}

describe("log hub", () => {
  it("follows a container once for any number of viewers, and gives each every line", async () => {
    const { engine, hub } = setup();
    engine.running.set("c1", true);
    engine.write("c1", at(0, "old 1"), at(1, "old 2"));
    const viewers = Array.from({ length: 50 }, () => new Collect());
    for (const v of viewers) {
      const f = hub.feed("c1");
      await f.ready;
      hub.watch(f, v);
    }
    expect(
      hub
        .feed("c1")
        .ring.lines()
        .map((l) => l.line),
    ).toEqual(["old 1", "old 2"]);
    await until(() => engine.openFollows("c1") === 1, { what: "the follow" });
    for (let i = 0; i < 20; i++) engine.write("c1", at(2 + i, `live ${i}`));
    await until(() => viewers.every((v) => v.lines.length === 20), { what: "every line to every viewer" });
    expect(viewers[49].lines).toEqual(Array.from({ length: 20 }, (_, i) => `live ${i}`));
    expect(engine.follows.filter((f) => f.id === "c1")).toHaveLength(1);
    expect(hub.stats()).toMatchObject({ feeds: 1, viewers: 50, follows: 1 });
  });

  it("follows again after a follow breaks while the container runs, without repeating or losing lines", async () => {
    const { engine, hub } = setup();
    engine.running.set("c2", true);
    const v = new Collect();
    const f = hub.feed("c2");
    await f.ready;
    hub.watch(f, v);
    await until(() => engine.openFollows("c2") === 1, { what: "the follow" });
    engine.write("c2", at(1, "a"), at(2, "b"));
    await until(() => v.lines.length === 2, { what: "a and b" });
    engine.breakFollows("c2", new Error("docker engine at /var/run/docker.sock did not answer within 10s"));
    engine.write("c2", at(3, "c"));
    await until(() => v.lines.length === 3, { what: "c after the retry" });
    expect(v.lines).toEqual(["a", "b", "c"]);
    expect(v.ended).toBeNull();
    expect(engine.follows.length).toBe(2);
  });

  it("ends with 'stopped' only when the engine says the container stopped", async () => {
    const { engine, hub } = setup();
    engine.running.set("c3", true);
    const v = new Collect();
    const f = hub.feed("c3");
    await f.ready;
    hub.watch(f, v);
    await until(() => engine.openFollows("c3") === 1, { what: "the follow" });
    engine.running.set("c3", false);
    engine.breakFollows("c3");
    await until(() => v.ended !== null, { what: "the end" });
    expect(v.ended).toEqual({ kind: "stopped" });
    expect(hub.stats().feeds).toBe(0);
  });

  it("reports an engine that stays unreachable as an engine error, not a stop", async () => {
    const { engine, hub } = setup({ giveUpMs: 60 });
    engine.running.set("c4", true);
    engine.failFollows = new Error("docker engine at /var/run/docker.sock did not answer within 10s");
    const v = new Collect();
    const f = hub.feed("c4");
    await f.ready;
    hub.watch(f, v);
    await until(() => v.ended !== null, { what: "the end" });
    expect(v.ended).toEqual({
      kind: "error",
      message: "docker engine error: docker engine at /var/run/docker.sock did not answer within 10s",
    });
    expect(engine.follows.length).toBeGreaterThan(1);
  });

  it("keeps a feed a while after its last viewer leaves, then stops following", async () => {
    const { engine, hub } = setup({ lingerMs: 100 });
    engine.running.set("c5", true);
    const f = hub.feed("c5");
    await f.ready;
    const stop = hub.watch(f, new Collect());
    await until(() => engine.openFollows("c5") === 1, { what: "the follow" });
    stop();
    // a viewer coming back within the linger reuses the same follow
    const again = hub.watch(hub.feed("c5"), new Collect());
    expect(hub.feed("c5")).toBe(f);
    again();
    await until(() => engine.openFollows("c5") === 0, { what: "the follow to stop" });
    expect(hub.stats().feeds).toBe(0);
    expect(engine.follows).toHaveLength(1);
  });
});
