/**
 * scripts/image.ts: the minimal image holds the binary, its ldd closure, the Docker CLI and compose plugin, CA
 * certificates and nothing like a shell; run with the Docker socket and a data volume it answers /api/health on a
 * loopback port, keeps its state in the volume, and stops cleanly on SIGTERM as PID 1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { $ } from "bun";
import { binary } from "../../helpers/binary";
import { until } from "../../helpers/http";
import { tempDir } from "../../helpers/tmp";

const SCRIPT = resolve(import.meta.dir, "../../../scripts/image.ts");
const tag = `sundeck-test/image:t${process.pid}`;
const name = `sundeck-image-test-${process.pid}`;
// a static stand-in for the compose plugin: this host has only Debian's Python docker-compose (v1), which is not copied
const STAND_IN = "/usr/bin/busybox";
let built = "";

beforeAll(async () => {
  const r = await $`${process.execPath} ${SCRIPT} --binary ${binary()} --tag ${tag} --compose-plugin ${STAND_IN}`
    .nothrow()
    .quiet();
  built = r.stdout.toString() + r.stderr.toString();
  if (r.exitCode !== 0) throw new Error(`image build failed: ${built}`);
}, 60_000);

afterAll(async () => {
  await $`docker rm -f ${name}`.nothrow().quiet();
  await $`docker rmi -f ${tag}`.nothrow().quiet();
});

describe("container image", () => {
  test("holds the binary, its libraries, the docker CLI and plugin, CA certificates; no shell", async () => {
    expect(built).toMatch(new RegExp(`^built ${tag} \\(\\d+\\.\\d MiB\\) sundeck \\S+\\n`));
    const id = (await $`docker create ${tag}`.text()).trim();
    try {
      const files = (await $`docker export ${id} | tar -t`.text()).split("\n").filter((f) => f && !f.endsWith("/"));
      const libs = (await $`ldd ${binary()}`.text())
        .split("\n")
        .map((l) => (/=>\s*(\/\S+)/.exec(l) ?? /^\s*(\/\S+)\s+\(/.exec(l))?.[1])
        .filter((p): p is string => !!p)
        .map((p) => p.slice(1));
      const expected = [
        "usr/local/bin/sundeck",
        "usr/local/bin/docker",
        "usr/libexec/docker/cli-plugins/docker-compose",
        "etc/ssl/certs/ca-certificates.crt",
        "etc/passwd",
        "etc/group",
        "etc/nsswitch.conf",
        ...libs,
      ];
      // what docker itself adds to every container's filesystem
      const runtime = [
        ".dockerenv",
        "etc/hostname",
        "etc/hosts",
        "etc/resolv.conf",
        "etc/mtab",
        "dev/console",
        "dev/pts",
        "dev/shm",
      ];
      expect(files.filter((f) => !runtime.includes(f)).sort()).toEqual([...new Set(expected)].sort());
      expect(files).not.toContain("bin/sh");
    } finally {
      await $`docker rm -f ${id}`.nothrow().quiet();
    }
    const cfg = JSON.parse(await $`docker image inspect -f ${"{{json .Config}}"} ${tag}`.text());
    expect(cfg.Entrypoint).toEqual(["/usr/local/bin/sundeck"]);
    expect(cfg.Cmd).toEqual(["serve"]);
    expect(cfg.Env).toContain("SUNDECK_DATA_DIR=/var/lib/sundeck");
  }, 30_000);

  test("runs with the socket mounted: /api/health on a loopback port, state in the volume, clean stop", async () => {
    const data = tempDir("sundeck-image-data-");
    await $`docker run -d --name ${name} -v /var/run/docker.sock:/var/run/docker.sock -v ${data}:/var/lib/sundeck -p 127.0.0.1::8443 ${tag}`.quiet();
    const port = (await $`docker port ${name} 8443/tcp`.text()).trim().split(":").pop();
    const health = await until(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(1000) });
        return res.status === 200 ? res.json() : null;
      },
      { timeout: 15_000, what: "the container's /api/health" },
    ).catch(async (e) => {
      throw new Error(`${e.message}\n${await $`docker logs ${name}`.nothrow().text()}`);
    });
    expect(health).toMatchObject({ status: "ok" });
    const logs = (await $`docker logs ${name} 2>&1`.nothrow().text()).toString();
    expect(logs).toContain("docker engine found");
    expect(existsSync(join(data, "master_secret"))).toBe(true);
    expect(existsSync(join(data, "sundeck.db"))).toBe(true);
    await $`docker stop -t 10 ${name}`.quiet();
    expect((await $`docker inspect -f {{.State.ExitCode}} ${name}`.text()).trim()).toBe("0");
  }, 40_000);
});
