/**
 * Proves compose detection keeps its answer keyed by the binaries it ran: a start with the same binaries spawns no
 * compose, a changed, removed or added binary is detected again before the layer is settled, and the background
 * re-check takes compose's new answer when what the same binaries run changed. Compose is a script on a temp PATH
 * that counts its runs; the runner and the layer are the real ones.
 */
import { describe, expect, it } from "bun:test";
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DETECT_CACHE_FILE } from "../../../src/docker/detect-cache";
import { createDockerLayer } from "../../../src/docker/index";
import type { Engine } from "../../../src/docker/types";
import { LogSink } from "../../../src/log/logger";
import { tempDir } from "../../helpers/tmp";

const log = new LogSink({ stdout: false }).logger("docker");
/** The engine answers: only compose is under test. */
const engine = { ping: async () => true, version: async () => ({ version: "27.0", apiVersion: "1.46" }) } as unknown as Engine;

/** A PATH holding only a `docker-compose` that logs each run and prints the version in `version`. */
function fakeCompose(version = "1.29.2") {
  const bin = tempDir();
  const dataDir = tempDir();
  const calls = join(bin, "calls");
  const versionFile = join(bin, "version");
  writeFileSync(versionFile, `${version}\n`);
  const script = join(bin, "docker-compose");
  const write = (extra = "") => {
    writeFileSync(
      script,
      `#!/bin/sh\necho "$*" >> ${calls}\nread -r v < ${versionFile}\necho "docker-compose version $v, build 1"\n${extra}`,
    );
    chmodSync(script, 0o755);
  };
  write();
  const env = { PATH: bin, HOME: bin };
  return {
    dataDir,
    env,
    runs: () => (existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n").length : 0),
    /** Replace the binary (another size, mtime and ctime). */
    upgrade: (to: string) => {
      writeFileSync(versionFile, `${to}\n`);
      write("# upgraded\n");
    },
    /** What the same binary prints changes (a library under it was upgraded). */
    answer: (to: string) => writeFileSync(versionFile, `${to}\n`),
    remove: () => rmSync(script),
    layer: () => createDockerLayer(log, { engine, cacheDir: dataDir, env }),
  };
}

describe("compose detection kept in the data dir", () => {
  it("a start with the same binaries takes the kept answer without running compose", async () => {
    const c = fakeCompose();
    const first = c.layer();
    await first.detect();
    expect(first.compose?.version).toBe("1.29.2");
    expect(c.runs()).toBe(1);
    expect(existsSync(join(c.dataDir, DETECT_CACHE_FILE))).toBe(true);

    const second = c.layer();
    await second.detect();
    second.stop();
    expect(c.runs()).toBe(1);
    expect(second.compose?.flavor).toBe("v1");
    expect(second.compose?.version).toBe("1.29.2");
    expect(second.problem).toBeNull();
  });

  it("a changed compose binary is detected again before the layer is settled", async () => {
    const c = fakeCompose();
    await c.layer().detect();
    c.upgrade("1.27.4");

    const next = c.layer();
    await next.detect();
    await next.settled();
    expect(c.runs()).toBe(2);
    expect(next.compose?.version).toBe("1.27.4");

    // and the new answer is the one kept
    const after = c.layer();
    await after.detect();
    after.stop();
    expect(c.runs()).toBe(2);
    expect(after.compose?.version).toBe("1.27.4");
  });

  it("a removed compose binary is missed at once, not taken from the kept answer", async () => {
    const c = fakeCompose();
    await c.layer().detect();
    c.remove();

    const next = c.layer();
    await next.detect();
    expect(next.compose).toBeNull();
    expect(next.problem).toContain("docker-compose");
  });

  it("the background re-check takes compose's answer when the same binaries answer differently", async () => {
    const c = fakeCompose();
    await c.layer().detect();
    c.answer("1.28.6");

    const next = c.layer();
    await next.detect();
    next.stop();
    expect(next.compose?.version).toBe("1.29.2");
    await next.recheck();
    expect(c.runs()).toBe(2);
    expect(next.compose?.version).toBe("1.28.6");

    const after = c.layer();
    await after.detect();
    after.stop();
    expect(after.compose?.version).toBe("1.28.6");
    expect(c.runs()).toBe(2);
  });
});
