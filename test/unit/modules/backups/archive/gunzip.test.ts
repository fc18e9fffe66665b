/**
 * Capped streaming gunzip: what it passes through, where it cuts, and how it treats concatenated members, trailing
 * bytes, truncation and a bad CRC; and a raw gzip bomb cut at the cap with flat memory.
 */
import { describe, expect, it } from "bun:test";
import zlib from "node:zlib";
import { gunzipCapped, peek } from "../../../../../src/modules/backups/archive/gunzip";
import { ArchiveRefused } from "../../../../../src/modules/backups/archive/vet";
import { concat, gzip, streamOf } from "../../../../helpers/tar-corpus";

const enc = new TextEncoder();

async function readAll(s: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(s).arrayBuffer());
}

async function refusal(p: Promise<unknown>): Promise<ArchiveRefused> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ArchiveRefused) return e;
    throw e;
  }
  throw new Error("accepted");
}

const text = enc.encode("hello gzip ".repeat(1000));

describe("gunzipCapped", () => {
  it("passes the data through in any chunking", async () => {
    for (const chunk of [1, 100, 1 << 20]) expect(await readAll(gunzipCapped(streamOf(gzip(text), chunk), 1e9))).toEqual(text);
  });

  it("allows exactly the cap and refuses one byte more", async () => {
    expect((await readAll(gunzipCapped(streamOf(gzip(text)), text.length))).length).toBe(text.length);
    const e = await refusal(readAll(gunzipCapped(streamOf(gzip(text)), text.length - 1)));
    expect(e.message).toBe(`archive refused: decompressed size over the cap of ${text.length - 1} bytes`);
  });

  it("reads concatenated members as one stream, as gzip -d does", async () => {
    const both = concat(gzip(enc.encode("one ")), gzip(enc.encode("two")));
    expect(new TextDecoder().decode(await readAll(gunzipCapped(streamOf(both, 5), 1e9)))).toBe("one two");
  });

  it("refuses bytes after the last member that are not a member", async () => {
    const e = await refusal(readAll(gunzipCapped(streamOf(concat(gzip(text), enc.encode("junk"))), 1e9)));
    expect(e.rule).toBe("malformed gzip data");
  });

  it("refuses a member cut short and a bad crc", async () => {
    const g = gzip(text);
    expect((await refusal(readAll(gunzipCapped(streamOf(g.subarray(0, g.length - 4)), 1e9)))).rule).toBe("truncated gzip data");
    const bad = g.slice();
    bad[bad.length - 8] ^= 1;
    expect((await refusal(readAll(gunzipCapped(streamOf(bad), 1e9)))).rule).toBe("malformed gzip data");
  });

  it("refuses data that is not gzip", async () => {
    expect((await refusal(readAll(gunzipCapped(streamOf(text), 1e9)))).rule).toBe("malformed gzip data");
  });

  it("cuts a bomb of 4 GiB of zeros at a 1 GiB cap, with flat memory, and stops reading it", async () => {
    const seg = new Uint8Array(zlib.deflateRawSync(new Uint8Array(1 << 20), { finishFlush: zlib.constants.Z_FULL_FLUSH }));
    let fed = 0;
    const bomb = new ReadableStream<Uint8Array>({
      pull(c) {
        if (fed === 0) c.enqueue(new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]));
        if (fed >= 4096) return c.close();
        c.enqueue(concat(...Array.from({ length: 64 }, () => seg)));
        fed += 64;
      },
    });
    const before = process.memoryUsage().rss;
    let peakGrowth = 0;
    let out = 0;
    const r = gunzipCapped(bomb, 1024 ** 3).getReader();
    const e = await refusal(
      (async () => {
        for (;;) {
          const { done, value } = await r.read();
          if (done) return;
          out += value.length;
          peakGrowth = Math.max(peakGrowth, process.memoryUsage().rss - before);
        }
      })(),
    );
    expect(e.rule).toBe(`decompressed size over the cap of ${1024 ** 3} bytes`);
    expect(out).toBeLessThanOrEqual(1024 ** 3);
    // cut near the cap: not read on to the end of the 4 GiB
    expect(fed).toBeLessThan(1200);
    expect(peakGrowth).toBeLessThan(64 * 1024 * 1024);
  });
});

describe("peek", () => {
  it("shows the first bytes and still yields all of them", async () => {
    const [head, rest] = await peek(streamOf(text, 1), 2);
    expect(head.length).toBe(2);
    expect(await readAll(rest)).toEqual(text);
  });

  it("copes with a stream shorter than asked", async () => {
    const [head, rest] = await peek(streamOf(new Uint8Array(0)), 2);
    expect(head.length).toBe(0);
    expect((await readAll(rest)).length).toBe(0);
  });
});
