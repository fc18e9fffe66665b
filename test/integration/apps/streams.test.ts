/** The two app streams on a real engine: deploy-logs and container logs. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { freePort, startDockerServer, waitApp, waitSettled } from "../../helpers/apps";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";
import { openWs } from "../../helpers/ws";

const SLUG = "itest-streams";
let s: TestServer;
let port: number;

const compose = (p: number, tag = "v1") => `services:
  web:
    image: sundeck-test/web:latest
    ports: ["${p}:8080"]
    stop_grace_period: 1s
  talker:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; echo out-${tag}-$$(hostname); echo err-${tag} >&2; while true; do sleep 1; done"]
    stop_grace_period: 1s
`;

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer();
  port = await freePort();
});
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("deploy-logs", () => {
  it("streams a deploy's compose output and ends with one done frame, then a clean close", async () => {
    const ws = await openWs(s.url, `/api/apps/${SLUG}/deploy-logs`, { cookie: s.root.cookie });
    expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose: compose(port) })).status).toBe(202);
    const closed = await ws.waitClose(60_000);
    expect(closed.code).toBe(1000);
    const frames = ws.frames as any[];
    expect(frames.length).toBeGreaterThan(2);
    for (const f of frames) {
      expect(Object.keys(f).sort()).toEqual(["action", "done", "output", "timestamp"]);
      expect(["pull", "up", "down", "restart", "scale", "none"]).toContain(f.action);
      expect(Number.isNaN(Date.parse(f.timestamp))).toBe(false);
    }
    expect(frames.filter((f) => f.done)).toHaveLength(1);
    expect(frames[frames.length - 1]).toMatchObject({ done: true, action: "up" });
    expect(frames.some((f) => /Creating|Created|Starting|Started/.test(f.output))).toBe(true);
    await waitApp(s.root, SLUG, (a) => a.status === "running");
  });

  it("gives a late connection the lines so far before live ones", async () => {
    await waitSettled(s.root, SLUG);
    expect((await s.root.post(`/api/apps/${SLUG}/restart`)).status).toBe(202);
    const late = await openWs(s.url, `/api/apps/${SLUG}/deploy-logs`, { cookie: s.root.cookie });
    await late.waitClose(30_000);
    const frames = late.frames as any[];
    expect(frames[frames.length - 1].done).toBe(true);
    expect(frames.some((f) => f.action === "restart")).toBe(true);
  });

  it("sends one done frame with action none after 3 s when nothing runs", async () => {
    await waitSettled(s.root, SLUG);
    const started = Date.now();
    const ws = await openWs(s.url, `/api/apps/${SLUG}/deploy-logs`, { cookie: s.root.cookie });
    const closed = await ws.waitClose(10_000);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(2800);
    expect(waited).toBeLessThan(6000);
    expect(closed.code).toBe(1000);
    expect(ws.frames).toEqual([{ timestamp: expect.any(String), action: "none", output: "", done: true }]);
  });

  it("needs read access to the app", async () => {
    const stranger = await s.user("ralph", "manage");
    const res = await fetch(`${s.url}/api/apps/${SLUG}/deploy-logs`, {
      headers: {
        cookie: `session=${stranger.cookie}`,
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
      },
    });
    expect(res.status).toBe(404);
  });
});

describe("container logs", () => {
  it("sends the historical tail of every replica and closes when follow is false", async () => {
    expect((await s.root.post(`/api/apps/${SLUG}/scale`, { services: { talker: 2 } })).status).toBe(202);
    await waitApp(
      s.root,
      SLUG,
      (a) => a.status === "running" && a.services.find((x: any) => x.name === "talker").containers.length === 2,
    );
    await until(
      async () => {
        const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?service=talker&follow=false&tail=10`, { cookie: s.root.cookie });
        await ws.waitClose(10_000);
        return (ws.frames as any[]).filter((f) => f.stream === "stdout").length >= 2;
      },
      { timeout: 15_000, what: "both replicas to log" },
    );
    const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?service=talker&follow=false&tail=10`, { cookie: s.root.cookie });
    expect((await ws.waitClose(10_000)).code).toBe(1000);
    const frames = ws.frames as any[];
    const out = frames.filter((f) => f.stream === "stdout").map((f) => f.line);
    expect(new Set(out.map((l: string) => l.replace(/^out-v1-/, ""))).size).toBe(2);
    expect(frames.some((f) => f.stream === "stderr" && f.line === "err-v1")).toBe(true);
    for (const f of frames) {
      expect(Object.keys(f).sort()).toEqual(["line", "stream", "ts"]);
      expect(Number.isNaN(Date.parse(f.ts))).toBe(false);
    }
  });

  it("limits history to the tail and filters by since", async () => {
    const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?service=talker&follow=false&tail=1`, { cookie: s.root.cookie });
    await ws.waitClose(10_000);
    expect(ws.frames).toHaveLength(1);
    const future = new Date(Date.now() + 60_000).toISOString();
    const none = await openWs(s.url, `/api/apps/${SLUG}/logs?service=talker&follow=false&since=${encodeURIComponent(future)}`, {
      cookie: s.root.cookie,
    });
    await none.waitClose(10_000);
    expect(none.frames).toEqual([]);
  });

  it("follows live lines and closes when the containers stop", async () => {
    const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?service=web&tail=0`, { cookie: s.root.cookie });
    await fetch(`http://127.0.0.1:${port}/`);
    expect((await s.root.post(`/api/apps/${SLUG}/stop`)).status).toBe(202);
    const closed = await ws.waitClose(30_000);
    expect(closed.code).toBe(1000);
  });

  it("sends one error frame and closes when no container exists for the service", async () => {
    const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?service=nope`, { cookie: s.root.cookie });
    await ws.waitClose(10_000);
    expect(ws.frames).toHaveLength(1);
    expect((ws.frames[0] as any).error).toContain("not found");
  });
});
