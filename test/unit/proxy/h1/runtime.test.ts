/**
 * What the proxy engine relies on in Bun's sockets: every read is a buffer of its own (the outbox queues references
 * to what it could not write yet instead of copying it), on accepted and on dialled sockets, under bulk load.
 */
import { describe, expect, it } from "bun:test";

const TOTAL = 16 * 1024 * 1024;

describe("Bun sockets", () => {
  it("hand every read a buffer of its own that no later read overwrites", async () => {
    const payload = Buffer.alloc(TOTAL);
    for (let i = 0; i < TOTAL; i += 512) payload[i] = (i / 512) % 251;
    const digest = (b: Buffer) => Bun.hash(b);
    type Kept = { b: Buffer; h: number | bigint };
    const send = (s: { write(b: Buffer): number }, st: { off: number }) => {
      while (st.off < TOTAL) {
        const n = s.write(payload.subarray(st.off, Math.min(TOTAL, st.off + (1 << 20))));
        if (n <= 0) return;
        st.off += n;
      }
    };
    const accepted: Kept[] = [];
    const dialled: Kept[] = [];
    const back = { off: 0 };
    const forth = { off: 0 };
    let got = 0;
    let recv = 0;
    const { promise: done, resolve } = Promise.withResolvers<void>();
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        binaryType: "buffer",
        data(s, b: Buffer) {
          accepted.push({ b, h: digest(b) });
          got += b.length;
          if (got >= TOTAL && back.off === 0) send(s, back);
        },
        drain(s) {
          if (back.off > 0) send(s, back);
        },
      },
    });
    const client = await Bun.connect({
      hostname: "127.0.0.1",
      port: server.port,
      socket: {
        binaryType: "buffer",
        data(_s, b: Buffer) {
          dialled.push({ b, h: digest(b) });
          recv += b.length;
          if (recv >= TOTAL) resolve();
        },
        drain(s) {
          send(s, forth);
        },
      },
    });
    send(client, forth);
    await done;
    client.end();
    server.stop(true);
    for (const reads of [accepted, dialled]) {
      expect(reads.filter((k) => digest(k.b) !== k.h)).toEqual([]);
      expect(new Set(reads.map((k) => k.b.buffer)).size).toBe(reads.length);
    }
    expect(Buffer.concat(accepted.map((k) => k.b)).equals(payload)).toBe(true);
  });
});
