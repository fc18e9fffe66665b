/**
 * Container logs for many viewers on a real engine: a hundred followers of one chatty container each get every line
 * while the engine is followed once; the caps on open streams refuse with a reason and show in the system info.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Engine } from "../../../src/docker/types";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";
import { openWs, type WsProbe } from "../../helpers/ws";

const SLUG = "itest-loghub";
const VIEWERS = 100;
let s: TestServer;
/** Follows opened on the engine, per container. */
const follows = new Map<string, number>();

const compose = `services:
  chat:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; i=0; while true; do i=$$((i+1)); echo line-$$i; usleep 20000; done"]
    stop_grace_period: 1s
`;

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer({ streams: { max_open: 1000, max_per_user: 500 } });
  // count what reaches the engine: the hub reads the engine at each call, so this wrapper sees every follow
  const real = s.ctx.docker.engine!;
  const counting: Engine = {
    ...real,
    logs(id, o) {
      if (o?.follow) follows.set(id, (follows.get(id) ?? 0) + 1);
      return real.logs(id, o);
    },
  };
  s.ctx.docker.engine = counting;
  expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running");
}, 60_000);
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

/** The numbers of the `line-N` frames a viewer got. */
const numbers = (p: WsProbe) => (p.frames as Array<{ line?: string }>).map((f) => Number(f.line?.replace("line-", "")));

describe("container logs for many viewers", () => {
  it("gives a hundred followers every line while following the container once", async () => {
    const path = `/api/apps/${SLUG}/logs?service=chat&tail=5`;
    const viewers = await Promise.all(Array.from({ length: VIEWERS }, () => openWs(s.url, path, { cookie: s.root.cookie })));
    // everyone is live: take a line number all of them passed, then wait for 50 more lines each
    await until(() => viewers.every((v) => v.frames.length > 5), { timeout: 20_000, what: "every viewer live" });
    const target = Math.max(...viewers.map((v) => Math.max(...numbers(v)))) + 50;
    await until(() => viewers.every((v) => numbers(v).includes(target)), { timeout: 30_000, what: "50 more lines each" });
    for (const v of viewers) {
      const got = numbers(v);
      // no gap and no repeat from the first line a viewer got to the last
      expect(got.every((n, i) => i === 0 || n === got[i - 1] + 1)).toBe(true);
      expect(v.closed).toBeNull();
    }
    const containers = [...follows.keys()];
    expect(containers).toHaveLength(1);
    expect(follows.get(containers[0])).toBe(1);
    const info = (await s.root.get("/api/system/info")).json;
    expect(info.streams).toMatchObject({ open: VIEWERS, log_feeds: 1, log_viewers: VIEWERS, refused: 0 });
    for (const v of viewers) v.ws.close(1000);
    await until(async () => (await s.root.get("/api/system/info")).json.streams.open === 0, { what: "streams closed" });
  }, 90_000);

  it("refuses a history larger than 10,000 lines with one error frame, before asking the engine", async () => {
    const before = [...follows.values()].reduce((a, b) => a + b, 0);
    const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?service=chat&tail=10001`, { cookie: s.root.cookie });
    expect((await ws.waitClose()).code).toBe(1000);
    expect(ws.frames).toEqual([
      {
        error: "bad query: tail must be a whole number from 0 to 10000, since an RFC 3339 time or a duration such as 10m",
      },
    ]);
    expect([...follows.values()].reduce((a, b) => a + b, 0)).toBe(before);
  });

  it("refuses a stream over the per-user cap with 1008 and the reason, and counts it", async () => {
    const t = await startDockerServer({ streams: { max_open: 1000, max_per_user: 2 } });
    try {
      const path = "/api/system/process-logs/stream";
      const open = [await openWs(t.url, path, { cookie: t.root.cookie }), await openWs(t.url, path, { cookie: t.root.cookie })];
      const third = await openWs(t.url, path, { cookie: t.root.cookie });
      expect(await third.waitClose()).toEqual({ code: 1008, reason: "too many open streams for this user (limit 2)" });
      expect((await t.root.get("/api/system/info")).json.streams).toMatchObject({ open: 2, max_per_user: 2, refused: 1 });
      for (const p of open) p.ws.close(1000);
    } finally {
      await t.stop();
    }
  });
});
