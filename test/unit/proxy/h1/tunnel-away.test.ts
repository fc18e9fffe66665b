/**
 * A WebSocket tunnel whose replica leaves (a rolling deploy's drain deadline): the client gets a Close frame 1001
 * between two of the upstream's frames, never inside one, its answer ends the connection (a clean close, not 1006),
 * and the upstream connection is let go so the replica counts as drained. The frame reader is checked on its own
 * against frames of every header size, split at every byte.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import { FrameBoundaries } from "../../../../src/proxy/h1/ws-frames";
import type { Listeners } from "../../../../src/proxy/listeners";
import { until } from "../../../helpers/http";
import { plainProxy } from "../../../helpers/proxy";
import { OP, rawWs } from "../../../helpers/rawws";

/** An unmasked server frame (or a masked client one with `mask`). */
function frame(opcode: number, payload: Buffer, mask?: Buffer): Buffer {
  const n = payload.length;
  const m = mask ? 0x80 : 0;
  const head =
    n < 126
      ? Buffer.from([0x80 | opcode, m | n])
      : n < 65536
        ? Buffer.from([0x80 | opcode, m | 126, n >> 8, n & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, m | 127]), Buffer.from(new BigUint64Array([BigInt(n)]).buffer).reverse()]);
  return Buffer.concat([head, mask ?? Buffer.alloc(0), mask ? payload.map((b, i) => b ^ mask[i % 4]) : payload]);
}

describe("FrameBoundaries", () => {
  const frames = [
    frame(OP.text, Buffer.from("hi")),
    frame(OP.text, Buffer.alloc(0)),
    frame(2, Buffer.alloc(300, 7)),
    frame(2, Buffer.alloc(70_000, 9)),
    frame(OP.ping, Buffer.from("p"), Buffer.from([1, 2, 3, 4])),
    frame(OP.close, Buffer.from([0x03, 0xe8]), Buffer.from([9, 9, 9, 9])),
  ];
  const stream = Buffer.concat(frames);
  const ends = new Set<number>([0]);
  let at = 0;
  for (const f of frames) ends.add((at += f.length));

  it("is between frames exactly at each frame's end, fed whole or a byte at a time", () => {
    const whole = new FrameBoundaries();
    expect(whole.feed(stream)).toBe(stream.length);
    expect(whole.atBoundary).toBe(true);
    expect(whole.closes).toBe(1);
    const bytes = new FrameBoundaries();
    for (let i = 0; i < stream.length; i++) {
      expect(bytes.atBoundary).toBe(ends.has(i));
      bytes.feed(stream.subarray(i, i + 1));
    }
    expect(bytes.atBoundary).toBe(true);
  });

  it("stops at the first boundary after any split point", () => {
    for (const split of [1, 2, 3, 5, 11, 300, 305, 70_000, stream.length - 3]) {
      const r = new FrameBoundaries();
      r.feed(stream.subarray(0, split));
      const next = [...ends].filter((e) => e >= split).sort((a, b) => a - b)[0];
      expect(split + r.feed(stream.subarray(split), true)).toBe(next);
      expect(r.atBoundary).toBe(true);
    }
  });
});

const HOST = "ws.test";

/** A raw WebSocket upstream: answers the handshake, then does what the test says with each connection. */
interface Upstream {
  addr: string;
  conns: { write(b: Buffer): void; closed: boolean; got: Buffer[] }[];
  stop(): void;
}
function wsUpstream(): Upstream {
  const conns: Upstream["conns"] = [];
  const srv = Bun.listen<{ c: Upstream["conns"][number]; up: boolean }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { c: { write: (b) => s.write(b), closed: false, got: [] }, up: false };
      },
      data(s, d) {
        if (s.data.up) {
          s.data.c.got.push(Buffer.from(d));
          return;
        }
        const key = /sec-websocket-key: *(\S+)/i.exec(d.toString())?.[1] ?? "";
        const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
        s.write(
          `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`,
        );
        s.data.up = true;
        conns.push(s.data.c);
      },
      close(s) {
        if (s.data?.c) s.data.c.closed = true;
      },
    },
  });
  return { addr: `127.0.0.1:${srv.port}`, conns, stop: () => srv.stop(true) };
}

let proxy: Listeners;
let port: number;
let up: Upstream;

beforeAll(async () => {
  up = wsUpstream();
  proxy = await plainProxy({ apps: [{ slug: "ws", hosts: [HOST], upstream: up.addr }] });
  port = proxy.ports().main;
});

afterEach(() => {
  up.conns.length = 0;
});

afterAll(async () => {
  await proxy.stop(true);
  up.stop();
});

const leaving = () => new Set([up.addr]);

describe("a tunnel whose replica leaves", () => {
  it("closes a browser-grade client cleanly with 1001 and lets the upstream go", async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { host: HOST } } as unknown as string[]);
    const messages: string[] = [];
    ws.onmessage = (e) => messages.push(String(e.data));
    const closed = new Promise<CloseEvent>((r) => (ws.onclose = r));
    await new Promise((r, j) => {
      ws.onopen = r;
      ws.onerror = () => j(new Error("websocket error"));
    });
    await until(() => up.conns.length === 1, { what: "the upstream's tunnel" });
    up.conns[0].write(frame(OP.text, Buffer.from("before")));
    await until(() => messages.length === 1, { what: "the first message" });
    expect(proxy.upstreamBusy(leaving())).toBe(1);
    expect(proxy.closeTunnels(leaving())).toBe(1);
    const ev = await closed;
    expect(ev.code).toBe(1001);
    expect(ev.wasClean).toBe(true);
    expect(messages).toEqual(["before"]);
    await until(() => up.conns[0].closed && proxy.upstreamBusy(leaving()) === 0, { what: "the upstream connection to end" });
  });

  it("finishes a frame in progress before the Close, and answers the client's Close by ending", async () => {
    const c = await rawWs(port, "/", { host: HOST });
    await until(() => up.conns.length === 1, { what: "the upstream's tunnel" });
    const big = frame(2, Buffer.alloc(100_000, 1));
    up.conns[0].write(big.subarray(0, 40_000));
    await until(() => proxy.upstreamBusy(leaving()) === 1, { what: "busy" });
    await Bun.sleep(50);
    expect(proxy.closeTunnels(leaving())).toBe(1);
    await Bun.sleep(100);
    // mid-frame: nothing but the frame's own bytes may come yet
    expect(c.frames.length).toBe(0);
    up.conns[0].write(Buffer.concat([big.subarray(40_000), frame(OP.text, Buffer.from("after the boundary"))]));
    await until(() => c.closeCode !== null, { what: "the Close frame" });
    expect(c.frames.map((f) => [f.opcode, f.payload.length])).toEqual([
      [2, 100_000],
      [OP.close, 2],
    ]);
    expect(c.closeCode).toBe(1001);
    expect(c.ended).toBe(false);
    c.send(OP.close, Buffer.from([0x03, 0xe9]));
    await until(() => c.ended, { what: "the connection to end after the client's Close" });
  });

  it("ends the connection a second after its Close when the client does not answer", async () => {
    const c = await rawWs(port, "/", { host: HOST });
    await until(() => up.conns.length === 1, { what: "the upstream's tunnel" });
    const t0 = performance.now();
    expect(proxy.closeTunnels(leaving())).toBe(1);
    await until(() => c.closeCode === 1001, { what: "the Close frame" });
    await until(() => c.ended, { what: "the connection to end", timeout: 5000 });
    expect(performance.now() - t0).toBeGreaterThan(900);
  });

  it("leaves HTTP exchanges alone (they finish or are cut with the replica)", async () => {
    expect(proxy.closeTunnels(leaving())).toBe(0);
  });
});
