/**
 * Resident memory of one backup or restore stage, measured in a child process (in the test runner's own process the
 * other tests' heaps decide when the collector runs): `measureStage(stage, warm, main)` spawns this file, which runs
 * the stage once on `warm` (the runtime's one-time costs), says so, then on `main`; the parent samples the child's
 * VmRSS every 10 ms from /proc and returns the peak over the main pass minus the RSS after the warm-up.
 *
 * Stages: `dump` drains the volume strategy's dump of a container (name), `vet` runs the vetting pass over a
 * `.tar.gz` file (path).
 */
import { peakRss, rssMiB, stdoutLines } from "./child-rss";

export interface StageMemory {
  warmMiB: number;
  peakMiB: number;
  growthMiB: number;
  /** Bytes the main pass moved. */
  bytes: number;
}

/** Run `stage` in a child process on `warm`, then on `main`, and measure its RSS growth over the main pass. */
export async function measureStage(stage: "dump" | "vet", warm: string, main: string): Promise<StageMemory> {
  const proc = Bun.spawn([process.execPath, import.meta.path, stage, warm, main], { stdout: "pipe", stderr: "inherit" });
  const line = stdoutLines(proc, "stream-memory");
  if ((await line()) !== "warm") throw new Error("stream-memory child did not warm up");
  const warmMiB = rssMiB(proc.pid);
  const peak = peakRss(proc.pid, warmMiB);
  try {
    const out = JSON.parse(await line());
    return { warmMiB, peakMiB: peak.peakMiB, growthMiB: peak.peakMiB - warmMiB, bytes: out.bytes };
  } finally {
    peak.stop();
    proc.kill();
    await proc.exited;
  }
}

async function childPass(stage: string, arg: string): Promise<number> {
  const drain = async (s: ReadableStream<Uint8Array>) => {
    let n = 0;
    for await (const c of s as unknown as AsyncIterable<Uint8Array>) n += c.length;
    return n;
  };
  if (stage === "vet") {
    const { vetArchive } = await import("../../src/modules/backups/archive/vet");
    return (await vetArchive(Bun.file(arg).stream(), { maxBytes: 2 ** 40 })).bytes;
  }
  const { createEngine } = await import("../../src/docker/engine");
  const { toBackupContainer } = await import("../../src/modules/backups/containers");
  const { volumeStrategy } = await import("../../src/modules/backups/strategies/volume");
  const engine = createEngine();
  const c = toBackupContainer(await engine.inspect(arg));
  return drain(await volumeStrategy({ engine }).dump(c, {}));
}

if (import.meta.main) {
  const [stage, warm, main] = process.argv.slice(2);
  await childPass(stage, warm);
  // settle before the parent's baseline: what the warm-up left is the runtime's, not the main pass's
  await Bun.sleep(100);
  process.stdout.write("warm\n");
  await Bun.sleep(50);
  const bytes = await childPass(stage, main);
  process.stdout.write(`${JSON.stringify({ bytes })}\n`);
}
