/**
 * Benign archives the reader must not refuse, each a spelling some real writer uses: old-style type flags, v7 and
 * GNU headers, base-256 sizes, signed checksums, pax records it ignores, record padding, trailing bytes after the
 * end-of-archive marker (ignored, as GNU tar and Go do, and not passed on), a tar split across gzip members.
 */
import { describe, expect, it } from "bun:test";
import { ArchiveRefused, checkedTar, tarEntries, vetArchive } from "../../../../../src/modules/backups/archive/vet";
import { concat, END, gzip, header, member, pax, streamOf, tar } from "../../../../helpers/tar-corpus";

const CAP = 1024 ** 3;
const enc = new TextEncoder();

async function list(bytes: Uint8Array): Promise<Array<[string, string, number]>> {
  const out: Array<[string, string, number]> = [];
  for await (const e of tarEntries(streamOf(bytes, 100), { maxBytes: CAP })) out.push([e.name, e.type, e.size]);
  return out;
}

/** Recompute a header's checksum as a signed sum (what old tars wrote for bytes over 127). */
function signedChecksum(h: Uint8Array): Uint8Array {
  const b = h.slice();
  b.fill(0x20, 148, 156);
  let sum = 0;
  for (const v of b) sum += v > 127 ? v - 256 : v;
  b.set(enc.encode(`${sum.toString(8).padStart(6, "0")}\0 `), 148);
  return b;
}

describe("accepted spellings", () => {
  it("reads regular files, directories and the old-style type flag", async () => {
    const bytes = tar(
      member({ name: "./", type: "5" }),
      member({ name: "d/", type: "5" }),
      member({ name: "d/f" }, "data"),
      member({ name: "old", type: "\0" }, "v"),
      member({ name: "olddir/", type: "\0" }),
      member({ name: "empty" }),
    );
    expect(await list(bytes)).toEqual([
      ["./", "directory", 0],
      ["d/", "directory", 0],
      ["d/f", "file", 4],
      ["old", "file", 1],
      ["olddir/", "directory", 0],
      ["empty", "file", 0],
    ]);
  });

  it("reads v7 and GNU headers, where the prefix field holds times, not a name", async () => {
    // GNU keeps atime and ctime where ustar has its prefix: octal numbers there are times, not a name
    const gnu = header({ name: "gnufile", format: "gnu", size: 1 });
    gnu.set(enc.encode("14621626641\u000014621626641\u0000"), 345);
    const bytes = tar(member({ name: "v7file", format: "v7" }, "x"), signedChecksum(gnu), new Uint8Array(512));
    expect(await list(bytes)).toEqual([
      ["v7file", "file", 1],
      ["gnufile", "file", 1],
    ]);
  });

  it("reads a base-256 size and a signed checksum", async () => {
    const size = new Uint8Array(12);
    size[0] = 0x80;
    size[11] = 3;
    const h = header({ name: "é-b256", sizeField: size });
    expect(await list(tar(signedChecksum(h), new Uint8Array(512)))).toEqual([["é-b256", "file", 3]]);
  });

  it("ignores pax records that do not move or resize an entry", async () => {
    const records = { mtime: "1700000000.5", atime: "1", uid: "0", uname: "root", "SCHILY.xattr.user.x": "v", comment: "hi" };
    expect(await list(tar(pax(records), member({ name: "f" }, "x")))).toEqual([["f", "file", 1]]);
  });

  it("takes a pax size over the header's", async () => {
    const bytes = tar(pax({ size: "600" }), member({ name: "f", size: 0 }), new Uint8Array(1024));
    expect(await list(bytes)).toEqual([["f", "file", 600]]);
  });

  it("reads a global pax header that only sets other keys", async () => {
    expect(await list(tar(pax({ comment: "made by a test" }, "g"), member({ name: "f" }, "x")))).toEqual([["f", "file", 1]]);
  });

  it("ignores what follows the end-of-archive marker and does not pass it on", async () => {
    const body = member({ name: "f" }, "x");
    const bytes = concat(body, END, enc.encode("trailing garbage that is not a tar header at all"), new Uint8Array(9000));
    for (const b of [bytes, gzip(bytes)]) {
      expect(await vetArchive(streamOf(b, 777), { maxBytes: CAP })).toEqual({ entries: 1, bytes: bytes.length });
      const passed = await Bun.readableStreamToBytes(checkedTar(streamOf(b, 777), { maxBytes: CAP }));
      expect(passed as Uint8Array).toEqual(concat(body, END));
    }
  });

  it("reads a tar split across concatenated gzip members", async () => {
    const bytes = tar(member({ name: "a" }, "1"), member({ name: "b" }, "2"));
    const split = concat(gzip(bytes.subarray(0, 700)), gzip(bytes.subarray(700)));
    expect(await vetArchive(streamOf(split, 50), { maxBytes: CAP })).toEqual({ entries: 2, bytes: bytes.length });
  });

  it("reads a plain tar with gzip forced off, and refuses it with gzip forced on", async () => {
    const bytes = tar(member({ name: "f" }, "x"));
    expect((await vetArchive(streamOf(bytes), { maxBytes: CAP, gzip: false })).entries).toBe(1);
    await expect(vetArchive(streamOf(bytes), { maxBytes: CAP, gzip: true })).rejects.toThrow("malformed gzip data");
  });

  it("counts the bytes after the marker against the cap", async () => {
    const bytes = concat(tar(member({ name: "f" }, "x")), new Uint8Array(4096));
    await expect(vetArchive(streamOf(bytes), { maxBytes: 3000 })).rejects.toThrow("over the cap of 3000 bytes");
  });

  it("stops reading the source when the pass-through is cancelled", async () => {
    let cancelled = false;
    const src = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(member({ name: "f" }, "x")),
      cancel: () => {
        cancelled = true;
      },
    });
    const r = checkedTar(src, { maxBytes: CAP, gzip: false }).getReader();
    await r.read();
    await r.cancel();
    expect(cancelled).toBe(true);
  });

  it("lets a failing source surface as its own error, not as a refusal (a 500 with its detail logged, not a 400)", async () => {
    const broken = () =>
      new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(member({ name: "f" }, "x"));
          c.error(new Error("disk on fire"));
        },
      });
    await expect(vetArchive(broken(), { maxBytes: CAP, gzip: false })).rejects.toThrow("disk on fire");
    const r = checkedTar(broken(), { maxBytes: CAP, gzip: false }).getReader();
    const got = await (async () => {
      for (;;) await r.read();
    })().catch((e) => e);
    expect(got).not.toBeInstanceOf(ArchiveRefused);
    expect(String(got)).toContain("disk on fire");
  });
});
