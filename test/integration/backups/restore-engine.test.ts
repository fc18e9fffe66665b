/**
 * The stop and start around a restore go through the Engine API on the real engine, with no docker CLI at hand (the
 * command runner given fails every command): a stop waits the container's own stop grace period, past the 10 s
 * deadline of plain engine calls, and a stop or start of a container already in that state is fine.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createServiceContainers } from "../../../src/modules/backups/containers";
import type { BackupContainer } from "../../../src/modules/backups/types";
import { dockerOk, ensureTestImages, removeByLabel, requireDocker, uniqueName } from "../../helpers/docker";

const LABEL = uniqueName("sdt-restore-engine");
const noCli = {
  run: async (argv: string[]) => {
    throw new Error(`no command may run here: ${argv.join(" ")}`);
  },
};
let containers: ReturnType<typeof createServiceContainers>;

/** A busybox container that ignores SIGTERM, so a stop takes its whole grace period. */
const stubborn = async (graceS: number): Promise<BackupContainer> => {
  const id = await dockerOk(
    "run",
    "-d",
    "--label",
    LABEL,
    "--stop-timeout",
    String(graceS),
    "sundeck-test/busybox:latest",
    "sh",
    "-c",
    "trap '' TERM; while true; do sleep 1; done",
  );
  return { id, name: id.slice(0, 12), service: "", image: "", env: [], mounts: [] };
};
const state = async (c: BackupContainer) => (await dockerOk("inspect", "-f", "{{.State.Status}}", c.id)).trim();

beforeAll(async () => {
  const engine = await requireDocker();
  await ensureTestImages();
  containers = createServiceContainers({ engine, compose: null, problem: null }, noCli);
}, 120_000);
afterAll(async () => {
  await removeByLabel(LABEL);
}, 60_000);

describe("stop and start through the Engine API", () => {
  it("stops a container after its own grace period (longer than the 10 s call deadline) and starts it again", async () => {
    const c = await stubborn(12);
    const t0 = Date.now();
    await containers.stop(c);
    const took = Date.now() - t0;
    expect(await state(c)).toBe("exited");
    // killed at the end of its grace period, not before
    expect(took).toBeGreaterThanOrEqual(11_000);
    await containers.start(c);
    expect(await state(c)).toBe("running");
  }, 60_000);

  it("takes a stop of a stopped container and a start of a running one as done", async () => {
    const c = await stubborn(1);
    await containers.start(c);
    expect(await state(c)).toBe("running");
    await containers.stop(c);
    await containers.stop(c);
    expect(await state(c)).toBe("exited");
    await containers.start(c);
    await containers.start(c);
    expect(await state(c)).toBe("running");
  }, 60_000);

  it("names the container and the engine's reason when there is no such container", async () => {
    const gone: BackupContainer = { id: "sdt-no-such-container", name: "ghost", service: "", image: "", env: [], mounts: [] };
    await expect(containers.start(gone)).rejects.toThrow(/^starting ghost failed: .*no such container/i);
    await expect(containers.stop(gone)).rejects.toThrow(/^stopping ghost failed: .*no such container/i);
  });
});
