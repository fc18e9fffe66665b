/**
 * A tar.gz bomb against the default cap: 10 GiB of zeros (ten 1 GiB files, ~10 MiB of gzip, streamed by the test)
 * is cut at `backups.max_restore_bytes` (8 GiB) by both passes, reading no further, with resident memory flat.
 * SUNDECK_BOMB_REPORT=1 prints the figures.
 */
import { describe, expect, it } from "bun:test";
import { resolve } from "node:path";
import { defaults } from "../../../../../src/config/schema";
import { ArchiveRefused, checkedTar, vetArchive } from "../../../../../src/modules/backups/archive/vet";
import { zeroBomb } from "../../../../helpers/tar-corpus";

const GiB = 1024 ** 3;
const CAP = defaults().backups.max_restore_bytes;
const FLAT = 64 * 1024 * 1024;

/** Run `work` while sampling RSS every millisecond; returns the peak growth over the RSS at the start. */
async function peakRssGrowth(
  work: () => Promise<unknown>,
): Promise<{ growth: number; ms: number; error: unknown; samples: number }> {
  Bun.gc(true);
  const before = process.memoryUsage().rss;
  let peak = before;
  let samples = 0;
  const timer = setInterval(() => {
    samples++;
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 1);
  const t0 = performance.now();
  let error: unknown = null;
  try {
    await work();
  } catch (e) {
    error = e;
  }
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  const ms = performance.now() - t0;
  if (process.env.SUNDECK_BOMB_REPORT)
    console.log(
      `bomb: peak rss growth ${(peak - before) / 2 ** 20} MiB over ${before / 2 ** 20} MiB, ${Math.round(ms)} ms, ${samples} samples`,
    );
  return { growth: peak - before, ms, error, samples };
}

/** The bomb, counting the gzip bytes read from it. */
function countedBomb(): { stream: ReadableStream<Uint8Array>; read: () => number } {
  let n = 0;
  const stream = zeroBomb(10, GiB).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        n += chunk.length;
        c.enqueue(chunk);
      },
    }),
  );
  return { stream, read: () => n };
}

describe("gzip bomb", () => {
  it("is the default cap of 8 GiB the test runs against", () => {
    expect(CAP).toBe(8 * GiB);
  });

  it("vetArchive cuts 10 GiB of zeros at the 8 GiB cap with flat memory", async () => {
    const bomb = countedBomb();
    const { growth, error, samples } = await peakRssGrowth(() => vetArchive(bomb.stream, { maxBytes: CAP }));
    // the sampler really ran while the bomb was read (a peak taken only at the end would prove nothing)
    expect(samples).toBeGreaterThan(100);
    expect(error).toBeInstanceOf(ArchiveRefused);
    expect((error as ArchiveRefused).message).toBe(`archive refused: decompressed size over the cap of ${CAP} bytes`);
    // 10 GiB compress to ~10 MiB: stopping at 8 GiB leaves about a fifth unread
    expect(bomb.read()).toBeLessThan(9 * 1024 * 1024);
    expect(growth).toBeLessThan(FLAT);
  }, 60_000);

  it("vetArchive keeps memory flat in a process with a big heap (the server's), where the collector runs late", async () => {
    // live objects as a long-running server holds them: the collector then lets garbage pile up for longer
    let held: Array<{ i: number; s: string }> | null = Array.from({ length: 2_000_000 }, (_, i) => ({ i, s: `x${i}` }));
    const { growth, error } = await peakRssGrowth(() => vetArchive(countedBomb().stream, { maxBytes: CAP }));
    expect(held.length).toBe(2_000_000);
    held = null;
    expect(error).toBeInstanceOf(ArchiveRefused);
    expect(growth).toBeLessThan(96 * 1024 * 1024);
  }, 60_000);

  it("checkedTar passes on at most the cap, then errors, with flat memory", async () => {
    const bomb = countedBomb();
    let passed = 0;
    const { growth, error, samples } = await peakRssGrowth(async () => {
      const r = checkedTar(bomb.stream, { maxBytes: CAP }).getReader();
      for (;;) {
        const { done, value } = await r.read();
        if (done) return;
        passed += value.length;
      }
    });
    expect(error).toBeInstanceOf(ArchiveRefused);
    expect(samples).toBeGreaterThan(100);
    expect(passed).toBeLessThanOrEqual(CAP);
    expect(passed).toBeGreaterThan(CAP - 2 * 1024 * 1024);
    expect(growth).toBeLessThan(FLAT);
  }, 60_000);

  it("vetArchive reads half a million empty files with flat memory (nothing kept per entry)", async () => {
    // in a fresh process: what is measured is what the reader keeps, not when a big heap's collector runs
    const p = Bun.spawn([process.execPath, resolve(import.meta.dir, "../../../../helpers/vet-memory.ts")], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect(err === "" || code === 0).toBe(true);
    const r = JSON.parse(out.trim().split("\n").at(-1)!) as { growth_mib: number; entries: number; bytes: number };
    expect(r).toMatchObject({ entries: 500_000, bytes: 512 * 500_001 + 512 });
    expect(r.growth_mib).toBeLessThan(FLAT / 2 ** 20);
  }, 60_000);
});
