/** The log hub on a scripted engine: one follow per container for every viewer, retries, truthful ends, lingering. */
import { describe, expect, it } from "bun:test";
import { resolve } from "node:path";
import type { FeedEnd, FeedViewer } from "../../../../src/modules/logs/feed";
import type { HubLine } from "../../../../src/modules/logs/ring";
import { at } from "../../../helpers/fake-engine";
import { until } from "../../../helpers/http";
import { scriptedHub } from "../../../helpers/log-hub";

const CHILD = resolve(import.meta.dir, "../../../helpers/hub-collect.ts");

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

const setup = scriptedHub;

/** One turn of the event loop: timers due now have run. */
const turn = () => new Promise<void>((r) => setTimeout(r, 0));

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

  it("lets go of a stopped feed: its ring is emptied and the feed and ring are collected", async () => {
    // in a fresh process: see the child's header for why
    const p = Bun.spawn([process.execPath, CHILD], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) throw new Error(`hub-collect exited ${code}: ${err}`);
    const r = JSON.parse(out.trim().split("\n").at(-1)!);
    expect(r).toEqual({ ring_size_after_stop: 0, feeds: 0, collected: true });
  }, 20_000);

  it("drops the ring on stop even while the feed object is still held", async () => {
    const { engine, hub } = setup();
    engine.running.set("c7", true);
    engine.write("c7", at(0, "a"), at(1, "b"));
    const f = hub.feed("c7");
    await f.ready;
    expect(f.ring.size).toBe(2);
    hub.stop();
    expect(f.ring.size).toBe(0);
    expect(f.viewerCount).toBe(0);
    // a stopped feed is not the hub's any more: the next viewer gets a new one
    expect(hub.current(f)).toBe(false);
    expect(hub.feed("c7")).not.toBe(f);
  });

  it("collects garbage once when the last feed stops, at most once per interval", async () => {
    let clock = 0;
    let collected = 0;
    const { engine, hub } = setup({ lingerMs: 10, collect: () => collected++, collectEveryMs: 10_000, now: () => clock });
    for (const id of ["a", "b", "c", "d"]) engine.running.set(id, true);
    const watchAll = async (ids: string[]) => {
      const stops: Array<() => void> = [];
      for (const id of ids) {
        const f = hub.feed(id);
        await f.ready;
        stops.push(hub.watch(f, new Collect()));
      }
      return stops;
    };

    // two feeds: nothing when the first stops, one collection when the last does
    const [stopA, stopB] = await watchAll(["a", "b"]);
    stopA();
    await until(() => hub.stats().feeds === 1, { what: "a to stop" });
    await turn();
    expect(collected).toBe(0);
    stopB();
    await until(() => collected === 1, { what: "the collection when the hub went idle" });
    expect(hub.stats()).toMatchObject({ feeds: 0, collections: 1 });
    expect(hub.stats().lastCollectMs).toBeGreaterThanOrEqual(0);

    // idle again within the interval: put off, and dropped when a feed starts before it is due
    clock += 1000;
    const [stopC] = await watchAll(["c"]);
    stopC();
    await until(() => hub.stats().feeds === 0, { what: "c to stop" });
    await turn();
    expect(collected).toBe(1);
    const [stopD] = await watchAll(["d"]);

    // idle after the interval: collected again
    clock += 20_000;
    stopD();
    await until(() => collected === 2, { what: "the collection after the interval" });
    expect(hub.stats().collections).toBe(2);
  });

  it("does not collect when the server stops", async () => {
    let collected = 0;
    const { engine, hub } = setup({ collect: () => collected++ });
    engine.running.set("e", true);
    await hub.feed("e").ready;
    hub.stop();
    await turn();
    expect(collected).toBe(0);
  });
});
