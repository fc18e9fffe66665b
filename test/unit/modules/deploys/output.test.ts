/** Deploy output replays then follows lines to one done frame, waits for a deploy; app locks hand over in order. */
import { describe, expect, it } from "bun:test";
import { AppLocks } from "../../../../src/modules/deploys/locks";
import { type DeployFrame, DeployOutput } from "../../../../src/modules/deploys/output";
import { until } from "../../../helpers/http";

describe("deploy output", () => {
  it("replays the lines so far to a late subscriber, then sends live ones and one done frame", () => {
    const out = new DeployOutput();
    out.begin("blog");
    out.line("blog", "pull", "pulling web");
    const got: DeployFrame[] = [];
    out.follow("blog", (f) => got.push(f));
    out.line("blog", "up", "creating web");
    out.end("blog", "up", "deployed version 2");
    out.line("blog", "up", "after the end");
    expect(got.map((f) => [f.action, f.output, f.done])).toEqual([
      ["pull", "pulling web", false],
      ["up", "creating web", false],
      ["up", "deployed version 2", true],
    ]);
    expect(got.every((f) => !Number.isNaN(Date.parse(f.timestamp)))).toBe(true);
    expect(out.active("blog")).toBe(false);
  });

  it("waits for a deploy that starts within the wait, and follows it", async () => {
    const out = new DeployOutput();
    const got: DeployFrame[] = [];
    out.follow("blog", (f) => got.push(f), 1000);
    setTimeout(() => {
      out.begin("blog");
      out.line("blog", "up", "late start");
      out.end("blog", "up", "ok");
    }, 50);
    await until(() => got.length === 2);
    expect(got.map((f) => f.output)).toEqual(["late start", "ok"]);
    expect(got[1].done).toBe(true);
  });

  it("sends the single done frame with action none when nothing starts within the wait", async () => {
    const out = new DeployOutput();
    const got: DeployFrame[] = [];
    const started = Date.now();
    out.follow("blog", (f) => got.push(f), 200);
    await until(() => got.length === 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(got[0]).toMatchObject({ action: "none", output: "", done: true });
    // a deploy starting afterwards is not delivered to the closed follower
    out.begin("blog");
    out.line("blog", "up", "x");
    expect(got).toHaveLength(1);
  });

  it("tells when the last in-flight deploy ends, over every app", () => {
    let idle = 0;
    const out = new DeployOutput(Date.now, () => idle++);
    out.begin("blog");
    out.begin("shop");
    out.end("blog", "up", "deployed");
    expect(idle).toBe(0);
    expect(out.inFlight()).toBe(1);
    out.end("shop", "up", "deployed");
    expect(idle).toBe(1);
    expect(out.inFlight()).toBe(0);
    out.end("shop", "up", "deployed");
    expect(idle).toBe(1);
  });

  it("stops delivering after unsubscribe", () => {
    const out = new DeployOutput();
    out.begin("blog");
    const got: DeployFrame[] = [];
    const stop = out.follow("blog", (f) => got.push(f));
    stop();
    out.line("blog", "up", "x");
    expect(got).toEqual([]);
  });
});

describe("app locks", () => {
  it("refuse a second holder and hand over in order to waiters", async () => {
    const locks = new AppLocks();
    const release = locks.tryAcquire("blog")!;
    expect(locks.tryAcquire("blog")).toBeNull();
    expect(locks.tryAcquire("shop")).not.toBeNull();
    const order: string[] = [];
    const a = locks.acquire("blog").then((r) => {
      order.push("a");
      r();
    });
    const b = locks.acquire("blog").then((r) => {
      order.push("b");
      r();
    });
    release();
    await Promise.all([a, b]);
    expect(order).toHaveLength(2);
    expect(locks.busy("blog")).toBe(false);
  });
});
