/**
 * The pack walk against packs written by hand, as a hostile remote (or a man in the middle of a plain-http remote)
 * can send them: lying counts and sizes, zlib streams that end early, never end or carry garbage, deflate bombs under
 * the header cap, ofs-deltas pointing at themselves or into the middle of an entry, ref-delta cycles, deltas copying
 * past their base or lying about their result. Each is refused or skipped, never trusted, within memory and time; and
 * the two that were not (pending deltas held whole until the end; ref-delta chains resolved in quadratic time).
 */
import { describe, expect, it } from "bun:test";
import zlib from "node:zlib";
import { DEFAULT_LIMITS } from "../../../../src/modules/gitsync/repo/limits";
import { readBounded } from "../../../../src/modules/gitsync/repo/objects";
import { ingestPack } from "../../../../src/modules/gitsync/repo/pack-ingest";
import { copyOp, delta, type Entry, insertOp, makePack, oidOf, packFile, rssMiB, varint, within } from "./attack-fixture";

const BLOB = 3;
const TREE = 2;
const OFS = 6;
const REF = 7;

async function ingest(entries: Entry[], o: Parameters<typeof makePack>[1] = {}, limits = DEFAULT_LIMITS, ms = 30_000) {
  const { path, gitdir } = packFile(makePack(entries, o).bytes);
  return { gitdir, result: await ingestPack(path, gitdir, limits, within(ms)) };
}
const refused = (entries: Entry[], o: Parameters<typeof makePack>[1] = {}) =>
  expect(ingest(entries, o)).rejects.toThrow(/malformed pack|more than git_sync.max_objects/);

const base = Buffer.from("the base object of every delta here\n");

describe("a hand-made pack", () => {
  it("claiming 2^32-1 objects is refused before any is read", async () => {
    await expect(ingest([{ type: BLOB, data: base }], { count: 0xffffffff })).rejects.toThrow(
      "the remote sent 4294967295 objects, more than git_sync.max_objects (100000): nothing was applied",
    );
  });

  it("whose count is smaller or larger than its entries is refused", async () => {
    const two: Entry[] = [
      { type: BLOB, data: base },
      { type: BLOB, data: Buffer.from("x") },
    ];
    await expect(ingest(two, { count: 1 })).rejects.toThrow("bytes after the last entry");
    await expect(ingest(two, { count: 3 })).rejects.toThrow("entry 2 has no valid header");
  });

  it("with entries whose header size is smaller or larger than their data is refused", async () => {
    await refused([{ type: BLOB, data: base, size: base.length - 1 }]);
    await refused([{ type: BLOB, data: base, size: base.length + 1 }]);
    // over the blob cap by its header, less when inflated: the skip path checks the size too
    await refused([{ type: BLOB, data: base, size: 2 * 1024 * 1024 }]);
  });

  it("whose zlib stream ends early, never ends, or has garbage after it is refused", async () => {
    const z = zlib.deflateSync(base);
    await refused([{ type: BLOB, data: base, raw: z.subarray(0, z.length - 6) }]);
    // stored blocks that never set the final bit: the stream runs into the trailer
    const open = zlib.deflateRawSync(base, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    await refused([{ type: BLOB, data: base, raw: Buffer.concat([Buffer.from([0x78, 0x01]), open]) }]);
    await refused([{ type: BLOB, data: base, raw: Buffer.concat([z, Buffer.from("garbage")]) }]);
    await refused([{ type: BLOB, data: base, raw: Buffer.from("not zlib at all") }]);
  });

  it("with a deflate bomb in a tree under the header cap is refused without inflating it", async () => {
    const bomb = zlib.deflateSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 });
    Bun.gc(true);
    const before = rssMiB();
    const t0 = Date.now();
    await refused([{ type: TREE, data: Buffer.alloc(0), size: 1000, raw: bomb }]);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(rssMiB() - before).toBeLessThan(64);
  });

  it("with ofs-deltas pointing at themselves, before the pack or past it is refused", async () => {
    const d = delta(base.length, base.length, copyOp(0, base.length));
    await refused([
      { type: BLOB, data: base },
      { type: OFS, data: d, ofs: 0 },
    ]);
    await refused([
      { type: BLOB, data: base },
      { type: OFS, data: d, ofs: 1_000_000 },
    ]);
  });

  it("with an ofs-delta pointing into the middle of an entry skips it, storing the rest", async () => {
    const d = delta(base.length, base.length, copyOp(0, base.length));
    const { result } = await ingest([
      { type: BLOB, data: base },
      { type: OFS, data: d, ofs: 3 },
    ]);
    expect(result.stored).toBe(1);
    expect(result.skipped).toEqual([{ oid: null, type: "delta", size: d.length, reason: "its delta base is not in the pack" }]);
  });

  it("with ref-deltas forming a cycle skips both", async () => {
    const a = Buffer.from("aaaa");
    const b = Buffer.from("bbbb");
    const { result } = await ingest([
      { type: REF, data: delta(4, 4, insertOp(a)), baseOid: oidOf("blob", b) },
      { type: REF, data: delta(4, 4, insertOp(b)), baseOid: oidOf("blob", a) },
    ]);
    expect(result.stored).toBe(0);
    expect(result.skipped.map((s) => s.reason)).toEqual([
      "its delta base is not in the pack",
      "its delta base is not in the pack",
    ]);
  });

  it("with a delta copying past its base, lying about its result, or using the reserved instruction is refused", async () => {
    // the delta right after its base: its offset back is the base entry's length
    const baseEntry: Entry = { type: BLOB, data: base };
    const after = (d: Buffer): Entry[] => [baseEntry, { type: OFS, data: d, ofs: makePack([baseEntry]).bytes.length - 32 }];
    const n = base.length;
    await refused(after(delta(n, n + 10, copyOp(0, n + 10))));
    await refused(after(delta(n, n, copyOp(n - 1, 2), insertOp(Buffer.alloc(n - 2)))));
    await refused(after(delta(n, n + 5, copyOp(0, n))));
    await refused(after(delta(n, n - 5, copyOp(0, n))));
    await refused(after(delta(n + 1, n, copyOp(0, n))));
    await refused(after(delta(n, n, copyOp(0, n - 1), Buffer.from([0]))));
    await refused(after(delta(n, n, copyOp(0, n - 1), Buffer.from([5, 1]))));
    // and a good one, built the same way, is stored
    const good = await ingest(after(delta(n, n + 3, copyOp(0, n), insertOp(Buffer.from("new")))));
    expect(good.result.stored).toBe(2);
    const built = await readBounded(good.gitdir, oidOf("blob", Buffer.concat([base, Buffer.from("new")])), 1024);
    expect(built.kind).toBe("ok");
  });

  it("with a delta whose result would pass the cap skips it by the size it declares", async () => {
    const d = delta(base.length, 8 * 1024 * 1024, copyOp(0, base.length));
    const { result } = await ingest([
      { type: BLOB, data: base },
      { type: OFS, data: d, ofs: makePack([{ type: BLOB, data: base }]).bytes.length - 32 },
    ]);
    expect(result.skipped).toEqual([{ oid: null, type: "blob", size: 8 * 1024 * 1024, reason: "8 MiB, over the 1 MiB limit" }]);
  });

  it("with a pack trailer that does not match is not the walk's to check (receivePack checks it)", async () => {
    // the walk reads a file receivePack already checked; it must not mistake the trailer for an entry
    const { result } = await ingest([{ type: BLOB, data: base }], { trailer: "bad" });
    expect(result.stored).toBe(1);
  });
});

/** Peak RSS growth (MiB) while the pack of `entries` is walked; the walk's result. */
async function peakOf(entries: Entry[]) {
  const { path, gitdir } = packFile(makePack(entries).bytes);
  Bun.gc(true);
  const before = rssMiB();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB())), 5);
  try {
    const r = await ingestPack(path, gitdir, DEFAULT_LIMITS, within());
    return { r, grew: Math.max(peak, rssMiB()) - before };
  } finally {
    clearInterval(timer);
  }
}

describe("memory of a walk", () => {
  it("stays within 64 MiB for a 400 KiB pack of a hundred 4 MiB trees (garbage collected as it goes)", async () => {
    const entries: Entry[] = Array.from({ length: 100 }, (_, i) => {
      const d = Buffer.alloc(4 * 1024 * 1024 - 100);
      d.writeUInt32BE(i, 0);
      return { type: TREE, data: d };
    });
    const { r, grew } = await peakOf(entries);
    expect(r.stored).toBe(100);
    expect(grew).toBeLessThan(64);
  });

  it("does not keep every pending delta's instructions in memory until the end (100 of 4 MiB, bases missing)", async () => {
    const four = 4 * 1024 * 1024;
    const entries: Entry[] = Array.from({ length: 100 }, (_, i) => {
      const d = Buffer.alloc(four);
      Buffer.concat([varint(10), varint(10)]).copy(d);
      return { type: REF, data: d, baseOid: i.toString(16).padStart(40, "0") };
    });
    const { r, grew } = await peakOf(entries);
    expect(r.skipped).toHaveLength(100);
    expect(r.skipped[0]!.reason).toBe("its delta base is not in the pack");
    expect(grew).toBeLessThan(64);
  });

  it("resolves a chain of 3,000 ref-deltas sent newest first in linear time", async () => {
    let prev = Buffer.from("seed of the chain");
    const chain: Entry[] = [];
    for (let i = 1; i <= 3000; i++) {
      const next = Buffer.concat([prev, Buffer.from([97 + (i % 26)])]);
      chain.push({
        type: REF,
        data: delta(prev.length, next.length, copyOp(0, prev.length), insertOp(next.subarray(-1))),
        baseOid: oidOf("blob", prev),
      });
      prev = next;
    }
    const t0 = Date.now();
    const { gitdir, result } = await ingest([{ type: BLOB, data: Buffer.from("seed of the chain") }, ...chain.reverse()]);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(result.stored).toBe(3001);
    expect(result.skipped).toEqual([]);
    expect((await readBounded(gitdir, oidOf("blob", prev), 1 << 20)).kind).toBe("ok");
  });
});
