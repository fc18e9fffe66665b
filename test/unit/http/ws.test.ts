/** Stream sockets (http/ws.ts) on the process-log stream: auth, origin, read limit, deadline (1008), pings, re-auth, shutdown. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { WsHub } from "../../../src/http/ws";
import { systemClock } from "../../../src/lib/time";
import { LogSink } from "../../../src/log/logger";
import { until } from "../../helpers/http";
import { OP, rawWs } from "../../helpers/rawws";
import { startTestServer, type TestServer } from "../../helpers/server";
import { openWs } from "../../helpers/ws";

const PATH = "/api/system/process-logs/stream";
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, { wsTimings: { readDeadlineMs: 1200, pingEveryMs: 150, authRecheckMs: 200 } });
});
afterAll(() => s.stop());

async function upgradeStatus(headers: Record<string, string>): Promise<number> {
  const res = await fetch(s.url + PATH, {
    headers: {
      connection: "Upgrade",
      upgrade: "websocket",
      "sec-websocket-version": "13",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
      ...headers,
    },
  });
  return res.status;
}

describe("websocket streams", () => {
  it("refuse the upgrade without credentials (401) and for a role below the route's (403)", async () => {
    expect(await upgradeStatus({})).toBe(401);
    const viewer = await s.user("wanda", "viewer");
    expect(await upgradeStatus({ cookie: `session=${viewer.cookie}` })).toBe(403);
    const key = s.keyFor("wanda");
    expect(await upgradeStatus({ authorization: `Bearer ${key.key}` })).toBe(403);
  });

  it("flush the buffer on connect, then send live lines, each frame one JSON string", async () => {
    s.ctx.logs.logger("test").info("before connect marker");
    const p = await openWs(s.url, PATH, { cookie: s.root.cookie });
    await p.waitFor((f) => f.some((l) => String(l).includes("before connect marker")));
    const buffered = s.ctx.logs.snapshot();
    expect(p.frames.slice(0, buffered.length)).toEqual(buffered);
    s.ctx.logs.logger("test").warn("live marker \x1b[31mred\x1b[0m");
    await p.waitFor((f) => f.some((l) => typeof l === "string" && l.includes("live marker red")));
    expect(p.frames.every((f) => typeof f === "string")).toBe(true);
    p.ws.close(1000);
    await p.waitClose();
  });

  it("accept an API key of a super-admin", async () => {
    const key = s.keyFor("root");
    const p = await openWs(s.url, PATH, { bearer: key.key });
    await p.waitFor((f) => f.length > 0);
    p.ws.close();
  });

  it("close a cross-origin upgrade with 1008", async () => {
    const p = await openWs(s.url, PATH, { cookie: s.root.cookie, origin: "https://evil.example" });
    expect((await p.waitClose()).code).toBe(1008);
    expect(p.frames).toEqual([]);
  });

  it("close a socket whose client sends more than 16 KiB in one message", async () => {
    const p = await openWs(s.url, PATH, { cookie: s.root.cookie });
    p.ws.send("x".repeat(16 * 1024 + 1));
    const closed = await p.waitClose();
    expect(closed.code).toBe(1009);
  });

  it("ping every client and close one that stays silent past the read deadline with 1008, not 1001", async () => {
    const port = Number(new URL(s.url).port);
    const silent = await rawWs(port, PATH, { cookie: `session=${s.root.cookie}`, origin: s.url });
    const started = Date.now();
    await until(() => silent.ended, { timeout: 6000, what: "the silent socket to close" });
    expect(silent.closeCode).toBe(1008);
    const close = silent.frames.find((f) => f.opcode === OP.close);
    expect(close?.payload.subarray(2).toString()).toBe("read deadline exceeded");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1100);
    expect(silent.frames.filter((f) => f.opcode === OP.ping).length).toBeGreaterThanOrEqual(2);
  });

  it("keep a client that sends messages, or only answers pings, past the deadline", async () => {
    const port = Number(new URL(s.url).port);
    const chatty = await rawWs(port, PATH, { cookie: `session=${s.root.cookie}`, origin: s.url });
    const ponger = await rawWs(port, PATH, { cookie: `session=${s.root.cookie}`, origin: s.url });
    let answered = 0;
    const tick = setInterval(() => {
      chatty.send(OP.text, "still here");
      const pings = ponger.frames.filter((f) => f.opcode === OP.ping);
      for (; answered < pings.length; answered++) ponger.send(OP.pong, pings[answered].payload);
    }, 50);
    try {
      const started = Date.now();
      // past twice the read deadline: a client that talks or answers pings is kept (the deadline leaves room for a
      // loaded machine: at 600 ms a busy CI runner once closed the ponger)
      await until(() => Date.now() - started > 2600, { timeout: 5000 });
      expect(chatty.ended).toBe(false);
      expect(ponger.ended).toBe(false);
      expect(answered).toBeGreaterThanOrEqual(3);
    } finally {
      clearInterval(tick);
      chatty.destroy();
      ponger.destroy();
    }
  });

  it("re-check authentication and close with 1008 once the session is revoked", async () => {
    const admin = await s.user("xena", "super_admin");
    const p = await openWs(s.url, PATH, { cookie: admin.cookie });
    await p.waitFor((f) => f.length > 0);
    await admin.post("/api/auth/logout");
    const closed = await p.waitClose(3000);
    expect(closed.code).toBe(1008);
  });

  it("re-check authentication and close with 1008 once the API key is revoked", async () => {
    const key = s.keyFor("root", "stream");
    const p = await openWs(s.url, PATH, { bearer: key.key });
    await p.waitFor((f) => f.length > 0);
    await s.root.del(`/api/apikeys/${key.keyId}`);
    expect((await p.waitClose(3000)).code).toBe(1008);
  });

  it("close every socket with 1001 when the server stops", async () => {
    const t = await startTestServer();
    const p = await openWs(t.url, PATH, { cookie: t.root.cookie });
    await p.waitFor((f) => f.length > 0);
    await t.stop();
    expect((await p.waitClose()).code).toBe(1001);
  });
});

describe("a client that cannot keep up", () => {
  it("is closed with 1011 once its unsent frames pass the bound, while a reading client gets every line", async () => {
    const port = Number(new URL(s.url).port);
    const slow = await rawWs(port, PATH, { cookie: `session=${s.root.cookie}`, origin: s.url });
    slow.pause();
    const reader = await openWs(s.url, PATH, { cookie: s.root.cookie });
    const before = s.ctx.ws.stats().too_slow;
    const log = s.ctx.logs.logger("flood");
    const big = "x".repeat(7000);
    // in bursts the reading client (on this same event loop) can keep up with; the paused one cannot
    for (let i = 0; i < 3000; i++) {
      log.warn(`flood ${i} ${big}`);
      if (i % 50 === 49) await Bun.sleep(2);
    }
    await until(() => s.ctx.ws.stats().too_slow === before + 1, { timeout: 10_000, what: "the slow client closed" });
    await reader.waitFor((f) => f.some((l) => String(l).includes("flood 2999 ")), 10_000);
    expect(reader.closed).toBeNull();
    slow.destroy();
    reader.ws.close(1000);
  });
});

describe("the budget of unsent bytes", () => {
  it("cuts the sockets furthest behind, and only as many as it takes to get back under 64 MiB", () => {
    const hub = new WsHub({ clock: systemClock, log: new LogSink({ stdout: false }).logger("ws"), recheck: async (p) => p });
    const MiB = 1024 * 1024;
    const closed: Array<[number, number | "cut", string?]> = [];
    const principal = { user: { id: 1 } } as any;
    const socks = [40, 5, 30, 0].map((mib, i) => {
      const raw = {
        getBufferedAmount: () => mib * MiB,
        close: (code: number, reason: string) => closed.push([i, code, reason]),
        // a close frame would wait behind the unsent bytes, which the runtime keeps meanwhile: only a cut frees them
        terminate: () => closed.push([i, "cut"]),
        ping() {},
      } as any;
      hub.add(raw, principal);
      return raw;
    });
    hub.sweep();
    expect(closed).toEqual([[0, "cut"]]);
    expect(hub.stats()).toMatchObject({ open: 3, too_slow: 1 });
    hub.shutdown();
    expect(socks).toHaveLength(4);
  });
});
