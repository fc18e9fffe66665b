/**
 * Container logs under attack on a real engine: a container's hostile output (megabytes without a newline, invalid
 * UTF-8, terminal escapes) reaches viewers as bounded, well-formed frames and the ring stays within its bytes; large
 * histories are sent whole at the client's pace, and bounded in bytes when their lines are long.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { MAX_LOG_LINE } from "../../../src/docker/streams";
import { MAX_ENGINE_HISTORIES, MAX_HISTORY_BYTES } from "../../../src/modules/logs/routes";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import { type RawWs, rawWs } from "../../helpers/rawws";
import type { TestServer } from "../../helpers/server";
import { openWs } from "../../helpers/ws";

const SLUG = "itest-logattack";
let s: TestServer;

// no network: the tests need none, and the engine's address pools are shared with every other test's projects
const compose = `services:
  hostile:
    image: sundeck-test/busybox:latest
    command:
      - sh
      - -c
      - >-
        trap 'exit 0' TERM;
        printf 'esc \\033[31mred\\033]0;title\\007 \\033[2J\\n';
        printf 'bad \\377\\376 utf8\\n';
        head -c 10485760 /dev/zero | tr '\\0' a; echo;
        echo after;
        while true; do sleep 1; done
    stop_grace_period: 1s
    network_mode: none
  history:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; i=0; while [ $$i -lt 10000 ]; do printf 'h%05d-%0700d\\n' $$i 0; i=$$((i+1)); done; while true; do sleep 1; done"]
    stop_grace_period: 1s
    network_mode: none
  slow:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do head -c 20000 /dev/zero | tr '\\\\0' a; sleep 3; echo -end; sleep 1; done"]
    stop_grace_period: 1s
    network_mode: none
  huge:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; i=0; while [ $$i -lt 1000 ]; do printf 'u%05d-%016000d\\n' $$i 0; i=$$((i+1)); done; while true; do sleep 1; done"]
    stop_grace_period: 1s
    network_mode: none
`;

/** The frames of one `follow=false` stream, and how it closed. */
async function read(query: string) {
  const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?follow=false&${query}`, { cookie: s.root.cookie });
  const closed = await ws.waitClose(60_000);
  return { lines: (ws.frames as Array<{ line: string }>).map((f) => f.line), closed };
}

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer();
  expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running");
}, 120_000);
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("hostile container output", () => {
  it("cuts a 10 MiB line, keeps the ring within 256 KiB, and passes escapes and bad UTF-8 as JSON text", async () => {
    const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?service=hostile&tail=100`, { cookie: s.root.cookie });
    await ws.waitFor((f) => f.some((x: any) => x.line === "after"), 30_000);
    const lines = (ws.frames as Array<{ line: string }>).map((f) => f.line);
    expect(lines).toContain("esc \u001b[31mred\u001b]0;title\u0007 \u001b[2J");
    expect(lines).toContain("bad \ufffd\ufffd utf8");
    const long = lines.filter((l) => l.startsWith("aaaa"));
    expect(long).toHaveLength(1);
    // Docker stores it as 16 KiB parts, each with its own time: the line sent is its start and how much was cut
    expect(long[0]).toMatch(/^a{1000}.*…\[\d+ characters cut\]$/s);
    for (const l of lines) expect(l.length).toBeLessThan(MAX_LOG_LINE + 100);
    const hostile = s.ctx.status.containers(SLUG).filter((c) => c.service === "hostile");
    const feeds = hostile.map((c) => s.ctx.logHub.feed(c.id));
    const ringBytes = feeds[0].ring.lines().reduce((n, l) => n + l.json.length, 0);
    expect(ringBytes).toBeLessThanOrEqual(256 * 1024);
    ws.ws.close(1000);
  }, 60_000);
});

describe("hostile queries", () => {
  it("refuse another app's logs at the upgrade, and answer odd values with one frame, never a server error", async () => {
    const port = Number(new URL(s.url).port);
    const stranger = await s.user("mallory", "viewer");
    const viewer = await s.user("vic", "viewer", [SLUG]);
    for (const path of [`/api/apps/${SLUG}/logs?service=hostile`, `/api/apps/${SLUG}/deploy-logs`]) {
      await expect(rawWs(port, path, { cookie: `session=${stranger.cookie}`, origin: s.url })).rejects.toThrow("404");
    }
    const bad = "bad query: tail must be a whole number from 0 to 10000, since an RFC 3339 time or a duration such as 10m";
    const cases: Array<[string, unknown]> = [
      ["service=..%2F..%2Fhostile%3Fa%3Db", { error: `not found: no container for service ../../hostile?a=b of ${SLUG}` }],
      ["service=hostile&since=999999999999d", { error: bad }],
      ["service=hostile&since=1700000000000000000", { error: bad }],
      ["service=hostile&tail=1e999", { error: bad }],
      ["service=hostile&tail=-1", { error: bad }],
    ];
    for (const [q, frame] of cases) {
      const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?follow=false&${q}`, { cookie: viewer.cookie });
      expect(await ws.waitClose(10_000)).toEqual({ code: 1000, reason: "" });
      expect(ws.frames).toEqual([frame]);
    }
    // a repeated parameter: the last one counts
    const { closed } = await read("service=nope&service=hostile&tail=2&tail=1");
    expect(closed).toEqual({ code: 1000, reason: "end of history" });
  }, 60_000);
});

describe("a long line still being written", () => {
  it("comes once, whole, to a stream that opened while it was half written", async () => {
    const engine = s.ctx.docker.engine!;
    const [c] = s.ctx.status.containers(SLUG).filter((x) => x.service === "slow");
    // Docker holds the first 16 KiB of the line as a part without a newline until the rest comes, 3 s later
    const lastLine = async () => {
      let last = "";
      for await (const l of engine.logs(c.id, { tail: 1, follow: false })) last = l.line;
      return last;
    };
    const halfWritten = (l: string) => l.startsWith("aaaa") && !l.endsWith("-end");
    await until(async () => halfWritten(await lastLine()), {
      timeout: 30_000,
      every: 20,
      what: "a line half written",
    });
    const ws = await openWs(s.url, `/api/apps/${SLUG}/logs?service=slow&tail=1`, { cookie: s.root.cookie });
    await ws.waitFor((f) => f.length >= 2, 15_000);
    const lines = (ws.frames as Array<{ line: string }>).map((f) => f.line);
    // was: the history sent the half (a part ending the engine's read), then the follow the whole line again
    for (const l of lines) expect(l.endsWith("-end")).toBe(true);
    ws.ws.close(1000);
  }, 60_000);
});

describe("reconnect storms", () => {
  it("open and close a thousand streams: one engine follow per container, no feed or stream left", async () => {
    const real = s.ctx.docker.engine!;
    const follows = new Map<string, number>();
    s.ctx.docker.engine = {
      ...real,
      logs(id, o) {
        if (o?.follow) follows.set(id, (follows.get(id) ?? 0) + 1);
        return real.logs(id, o);
      },
    };
    const before = s.ctx.logHub.stats().feeds;
    try {
      const path = `/api/apps/${SLUG}/logs?service=hostile&tail=5`;
      for (let round = 0; round < 20; round++) {
        // 50 at once, closed as soon as open: many leave before their stream has watched its feed
        const batch = await Promise.all(Array.from({ length: 50 }, () => openWs(s.url, path, { cookie: s.root.cookie })));
        for (const p of batch) p.ws.close(1000);
      }
      await until(() => s.ctx.ws.stats().open === 0, { timeout: 30_000, what: "every stream closed" });
      // the container's feed may linger from an earlier test (then the storm opened no follow at all)
      expect(s.ctx.logHub.stats()).toMatchObject({ feeds: before + follows.size, viewers: 0 });
      expect(follows.size).toBeLessThanOrEqual(1);
      expect([...follows.values()].every((n) => n === 1)).toBe(true);
    } finally {
      s.ctx.docker.engine = real;
    }
  }, 120_000);
});

describe("large histories", () => {
  it("sends 10,000 lines of history joined from the engine and the ring, paced to the client, without gap or repeat", async () => {
    await until(async () => (await read("service=history&tail=1")).lines[0]?.startsWith("h09999-"), {
      timeout: 60_000,
      what: "the history written",
    });
    const { lines, closed } = await read("service=history&tail=10000&since=1h");
    // was: closed with 1011 "client too slow" partway, the whole history written to the socket at once
    expect(closed).toEqual({ code: 1000, reason: "end of history" });
    expect(lines).toHaveLength(10_000);
    expect(lines.every((l, i) => l.startsWith(`h${String(i).padStart(5, "0")}-`))).toBe(true);
  }, 90_000);

  it("holds and sends at most 8 MiB of history however long its lines, the newest ones", async () => {
    await until(async () => (await read("service=huge&tail=1")).lines[0]?.startsWith("u00999-"), {
      timeout: 60_000,
      what: "the history written",
    });
    const { lines, closed } = await read("service=huge&tail=1000");
    expect(closed).toEqual({ code: 1000, reason: "end of history" });
    const bytes = lines.reduce((n, l) => n + l.length, 0);
    expect(bytes).toBeLessThanOrEqual(MAX_HISTORY_BYTES);
    expect(lines.length).toBeLessThan(1000);
    expect(lines.at(-1)).toStartWith("u00999-");
  }, 90_000);

  it("reads at most four histories from the engine at once while their clients stall, and serves the next when one goes", async () => {
    const real = s.ctx.docker.engine!;
    let reads = 0;
    s.ctx.docker.engine = {
      ...real,
      logs(id, o) {
        if (!o?.follow && o?.tail === 10_000) reads++;
        return real.logs(id, o);
      },
    };
    const path = `/api/apps/${SLUG}/logs?service=history&tail=10000&since=1h&follow=false`;
    const port = Number(new URL(s.url).port);
    const headers = { cookie: `session=${s.root.cookie}`, origin: s.url };
    const stalled: RawWs[] = [];
    try {
      for (let i = 0; i < MAX_ENGINE_HISTORIES; i++) {
        const ws = await rawWs(port, path, headers);
        ws.pause();
        stalled.push(ws);
      }
      await until(() => reads === MAX_ENGINE_HISTORIES, { what: "the stalled streams' histories read" });
      const next = await openWs(s.url, path, { cookie: s.root.cookie });
      // it watches its feed, then asks for a slot in the same turn
      await until(() => s.ctx.logHub.stats().viewers === MAX_ENGINE_HISTORIES + 1, { what: "the next stream waiting" });
      expect(reads).toBe(MAX_ENGINE_HISTORIES);
      expect(next.frames).toHaveLength(0);
      stalled.shift()!.destroy();
      expect(await next.waitClose(60_000)).toEqual({ code: 1000, reason: "end of history" });
      expect(next.frames).toHaveLength(10_000);
    } finally {
      for (const ws of stalled) ws.destroy();
      s.ctx.docker.engine = real;
    }
  }, 90_000);
});
