/**
 * An aborted exec is stopped inside the container (issue 13): a cancelled dump or an aborted hook must not keep
 * running there. Real engine: long `sleep`s started through the Engine API exec, aborted, then the container's process
 * list (`docker top`) must lose them within a few seconds: the command itself, children a shell started, a command
 * ignoring SIGTERM (killed after the grace), one run as another user, a hook that timed out, and a dump stream a run
 * cancelled.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { chmodSync, copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExecOptions } from "../../../src/docker/exec";
import type { Engine } from "../../../src/docker/types";
import { createServiceContainers } from "../../../src/modules/backups/containers";
import { runHooks } from "../../../src/modules/backups/hooks";
import { execOutput } from "../../../src/modules/backups/strategies/run";
import type { BackupContainer } from "../../../src/modules/backups/types";
import * as docker from "../../helpers/docker";
import { tempDir } from "../../helpers/tmp";

const name = docker.uniqueName("sdt-exec-abort");
const t: { engine: Engine; id: string } = { engine: null as never, id: "" };

beforeAll(async () => {
  t.engine = await docker.requireDocker();
  await docker.ensureTestImages();
  t.id = await docker.dockerOk("run", "-d", "--label", `io.sundeck.test=${name}`, docker.TEST_IMAGES.busybox, "sleep", "1d");
});

/** An image of one static binary the shell-less test builds (removed after). */
const NOSHELL = `sundeck-test/noshell:${name}`;

afterAll(async () => {
  await docker.removeByLabel(`io.sundeck.test=${name}`);
  await docker.docker("rmi", "-f", NOSHELL);
});

/** The command lines of the container's processes, as `docker top` (the host's view) lists them. */
async function processes(): Promise<string[]> {
  const out = await docker.dockerOk("top", t.id, "-o", "pid,user,args");
  return out.split("\n").slice(1).filter(Boolean);
}

/** Resolves once no process of the container matches `needle`; throws after `ms` with what is still there. */
async function goneWithin(needle: string, ms: number): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const left = (await processes()).filter((p) => p.includes(needle));
    if (left.length === 0) return;
    if (Date.now() - t0 > ms) throw new Error(`still running after ${ms} ms: ${left.join(" | ")}`);
    await Bun.sleep(100);
  }
}

/** Waits until every one of `needles` shows in the container's processes (the exec really started). */
async function started(...needles: string[]): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ps = await processes();
    if (needles.every((n) => ps.some((p) => p.includes(n)))) return;
    await Bun.sleep(50);
  }
  throw new Error(`${needles.join(", ")} never started`);
}

/** Start `cmd`, wait for `needles` in the container, abort, drain; returns how long the result took to settle. */
async function abortRunning(o: Omit<ExecOptions, "signal">, ...needles: string[]): Promise<{ ms: number; err: any }> {
  const abort = new AbortController();
  const p = await t.engine.exec(t.id, { ...o, signal: abort.signal });
  await started(...needles);
  const t0 = Date.now();
  abort.abort();
  const err = await new Response(p.stdout).arrayBuffer().catch((e) => e);
  expect(err?.name).toBe("AbortError");
  await p.result.catch(() => {});
  return { ms: Date.now() - t0, err };
}

describe("an aborted exec", () => {
  it("stops the command in the container", async () => {
    await abortRunning({ cmd: ["sleep", "3001"] }, "sleep 3001");
    // the result settles once the command is gone: nothing is left to wait for
    expect((await processes()).some((l) => l.includes("sleep 3001"))).toBe(false);
  });

  it("stops the children a shell started too", async () => {
    await abortRunning({ cmd: ["sh", "-c", "sleep 3002 & sleep 3003; echo never"] }, "sleep 3002", "sleep 3003");
    await goneWithin("sleep 300", 3000);
  });

  it("kills a command that ignores SIGTERM after the grace", async () => {
    const cmd = ["sh", "-c", "trap '' TERM; sleep 3004 & wait; sleep 3005"];
    const { ms } = await abortRunning({ cmd, killGraceMs: 1000 }, "sleep 3004");
    // it got the grace, then SIGKILL
    expect(ms).toBeGreaterThanOrEqual(900);
    await goneWithin("sleep 300", 3000);
  });

  it("stops a command run as another user than the container's", async () => {
    const abort = new AbortController();
    const p = await t.engine.exec(t.id, { cmd: ["sleep", "3006"], user: "1234:1234", signal: abort.signal });
    await started("sleep 3006");
    expect((await processes()).find((l) => l.includes("sleep 3006"))).toContain("1234");
    abort.abort();
    await new Response(p.stdout).arrayBuffer().catch(() => {});
    await p.result.catch(() => {});
    await goneWithin("sleep 3006", 3000);
  });

  it("leaves other execs of the container alone", async () => {
    const keep = new AbortController();
    const other = await t.engine.exec(t.id, { cmd: ["sleep", "3007"], signal: keep.signal });
    await abortRunning({ cmd: ["sleep", "3008"] }, "sleep 3008", "sleep 3007");
    await goneWithin("sleep 3008", 3000);
    expect((await processes()).some((l) => l.includes("sleep 3007"))).toBe(true);
    keep.abort();
    await other.result.catch(() => {});
    await goneWithin("sleep 3007", 3000);
  });
});

describe("an image without a shell", () => {
  it("has the host PID signalled, as this host shows it with the exec's mark", async () => {
    // an image of one static binary, `/sleep` (busybox picks the applet by its name): no sh, so no second exec can
    // signal anything; this test runs beside the engine, as root
    const ctx = tempDir("sdt-noshell-");
    copyFileSync("/bin/busybox", join(ctx, "sleep"));
    chmodSync(join(ctx, "sleep"), 0o755);
    writeFileSync(join(ctx, "Dockerfile"), 'FROM scratch\nCOPY sleep /sleep\nCMD ["/sleep", "1d"]\n');
    const image = NOSHELL;
    await docker.dockerOk("build", "-q", "--label", `io.sundeck.test=${name}`, "-t", image, ctx);
    const bare = await docker.dockerOk("run", "-d", "--label", `io.sundeck.test=${name}`, image);
    await expect(docker.dockerOk("exec", bare, "sh", "-c", "true")).rejects.toThrow();
    const top = async () => (await docker.dockerOk("top", bare, "-o", "pid,args")).split("\n");
    const abort = new AbortController();
    const p = await t.engine.exec(bare, { cmd: ["/sleep", "3011"], signal: abort.signal, killGraceMs: 500 });
    for (let i = 0; i < 100 && !(await top()).some((l) => l.includes("sleep 3011")); i++) await Bun.sleep(50);
    expect((await top()).some((l) => l.includes("sleep 3011"))).toBe(true);
    abort.abort();
    await new Response(p.stdout).arrayBuffer().catch(() => {});
    await p.result.catch(() => {});
    expect((await top()).some((l) => l.includes("sleep 3011"))).toBe(false);
  });
});

describe("through the backups", () => {
  const container = (): BackupContainer => ({ id: t.id, name, env: [], mounts: [] }) as never;

  it("a hook that timed out is stopped in the container", async () => {
    const containers = createServiceContainers({ engine: t.engine, compose: null, problem: null } as never);
    const err = await runHooks(containers, container(), "pre", ["sleep 3009"], undefined, 1500).catch((e) => e);
    expect(String(err?.message)).toContain("pre hook 1 timed out");
    await goneWithin("sleep 3009", 3000);
  });

  it("a dump a run cancelled is stopped in the container", async () => {
    const abort = new AbortController();
    const cmd = ["sh", "-c", "while :; do echo row; sleep 0.01; done & sleep 3010"];
    const out = await execOutput(t.engine, container(), "dump", cmd, [], { signal: abort.signal });
    const reader = out.getReader();
    await reader.read();
    await started("sleep 3010");
    abort.abort();
    await (async () => {
      for (;;) if ((await reader.read()).done) return;
    })().catch(() => {});
    await goneWithin("sleep 3010", 5000);
    expect((await processes()).some((l) => l.includes("sleep 0.01"))).toBe(false);
  });
});
