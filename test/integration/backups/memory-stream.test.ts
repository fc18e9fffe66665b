/**
 * Resident memory of the backup and restore streams (issue 13: a 1 GiB volume backs up and restores with RSS growing
 * under 20 MiB; scripts/bench/backup.ts measures the whole of it). Here the two stages whose garbage set the plateau,
 * each in a child process after a warm-up (test/helpers/stream-memory.ts), on 256 MiB so the plateau is reached:
 * the volume strategy's dump over the Engine API archive stream (grew ~21-23 MiB before the collections every few
 * MiB, ~10 after), and the vetting pass over a .tar.gz (12-15 MiB before the inflated chunks were freed as read, ~5).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { dockerOk, ensureTestImages, removeByLabel, requireDocker, TEST_IMAGES, uniqueName } from "../../helpers/docker";
import { measureStage } from "../../helpers/stream-memory";
import { tempDir } from "../../helpers/tmp";

const NAME = uniqueName("sdt-memory");
const LABEL = `io.sundeck.test=${NAME}`;
const MIB = 1024 * 1024;
let dir: string;

/** A volume of `mib` MiB (16 MiB files, half random, half a repeated line: ~2:1 under gzip) behind a container. */
async function volume(suffix: string, mib: number): Promise<string> {
  const vol = `${NAME}-${suffix}`;
  await dockerOk("volume", "create", "--label", LABEL, vol);
  await dockerOk(
    "run",
    "--rm",
    "-v",
    `${vol}:/d`,
    TEST_IMAGES.busybox,
    "sh",
    "-c",
    `i=0; while [ $i -lt ${mib / 16} ]; do j=0; while [ $j -lt 8 ]; do head -c 1048576 /dev/urandom; ` +
      `yes "sundeck memory $i $j" | head -c 1048576; j=$((j+1)); done > /d/f$i; i=$((i+1)); done`,
  );
  await dockerOk("run", "-d", "--name", vol, "--label", LABEL, "-v", `${vol}:/data`, TEST_IMAGES.busybox, "sleep", "1d");
  return vol;
}

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  dir = tempDir("sdt-memory-");
  await Promise.all([volume("warm", 16), volume("data", 256)]);
  for (const s of ["warm", "data"]) {
    const tar = Bun.spawn([
      "sh",
      "-c",
      `docker run --rm -v ${NAME}-${s}:/data ${TEST_IMAGES.busybox} tar -c data | gzip -1 > ${join(dir, `${s}.tar.gz`)}`,
    ]);
    expect(await tar.exited).toBe(0);
  }
}, 300_000);

afterAll(async () => {
  await removeByLabel(LABEL);
});

describe("resident memory of the backup streams", () => {
  it("the volume dump of 256 MiB over the Engine API grows RSS by less than 16 MiB", async () => {
    const m = await measureStage("dump", `${NAME}-warm`, `${NAME}-data`);
    expect(m.bytes).toBeGreaterThan(256 * MIB);
    expect(m.growthMiB).toBeLessThan(16);
  }, 120_000);

  it("the vetting pass over 256 MiB of tar.gz grows RSS by less than 8 MiB", async () => {
    const m = await measureStage("vet", join(dir, "warm.tar.gz"), join(dir, "data.tar.gz"));
    expect(m.bytes).toBeGreaterThan(256 * MIB);
    expect(m.growthMiB).toBeLessThan(8);
  }, 120_000);
});
