/**
 * Puts of 200 MiB keep resident memory flat: the body is generated as it is read, so any growth is what a target
 * buffers. The peak growth is printed for the notes. Measured here: local ~11 MiB; S3 with 8 MiB parts, 2 in flight,
 * 60-70 MiB whatever the size (100, 200 or 400 MiB): Bun's multipart upload holds about four times partSize x
 * queueSize (the part being filled, the parts in flight and their request copies). For the record: Bun's
 * `S3File.writer()` never pushes back (its write() always returns at once), and the same 200 MiB through it grew RSS
 * by ~228 MiB; the target streams through `S3File.write(Response)`, which pulls as parts go out.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { resolve } from "node:path";
import { type S3Server, startS3 } from "../../helpers/s3";
import { tempDir } from "../../helpers/tmp";

const TOTAL_MIB = 200;
const CHILD = resolve(import.meta.dir, "../../helpers/put-memory.ts");
let s3: S3Server;

beforeAll(async () => {
  s3 = await startS3("backups");
});
afterAll(async () => {
  await s3?.stop();
});

/** Run one put in a fresh process (the suite's own garbage would count otherwise); its peak RSS growth in MiB. */
async function peakGrowth(args: string[]): Promise<number> {
  const p = Bun.spawn([process.execPath, CHILD, ...args, String(TOTAL_MIB)], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`put-memory exited ${code}: ${err}`);
  const r = JSON.parse(out.trim().split("\n").at(-1)!) as { growth_mib: number; size: number; sha_ok: boolean };
  expect(r.size).toBe(TOTAL_MIB * 1024 * 1024);
  expect(r.sha_ok).toBe(true);
  return r.growth_mib;
}

describe("memory while putting 200 MiB", () => {
  it("stays flat on the local target", async () => {
    const growth = await peakGrowth(["local", tempDir()]);
    console.log(`local target: 200 MiB put, peak RSS growth ${growth.toFixed(1)} MiB`);
    expect(growth).toBeLessThan(16);
  }, 60_000);

  it("stays within a few times partSize x queueSize on the s3 target, far under the body", async () => {
    const growth = await peakGrowth(["s3", s3.endpoint, s3.bucket, s3.accessKey, "8", "2"]);
    console.log(`s3 target (8 MiB parts, 2 in flight): 200 MiB put, peak RSS growth ${growth.toFixed(1)} MiB`);
    expect(growth).toBeLessThan(6 * 8 * 2);
  }, 60_000);
});
