/**
 * What the release binary tests ask of `serve` on a target (musl.test.ts, arm64.test.ts): after `init` into a temp dir
 * it answers /api/health with the baked-in version on a free port, tells systemd READY=1 (the datagram goes through
 * the target's libc via bun:ffi), and on SIGTERM sends STOPPING=1 and exits 0. `cmd` is the binary, with the emulator
 * in front of it when it runs under qemu-user.
 */
import { expect } from "bun:test";
import { join } from "node:path";
import { freePort } from "../../helpers/apps";
import { until } from "../../helpers/http";
import { exec } from "../../helpers/release";
import { notifyReceiver } from "./notify-receiver";

export interface ServeCheck {
  cmd: string[];
  /** An empty directory for the config, data, apps and notify socket. */
  work: string;
  /** Extra environment of the binary (library paths). */
  env: Record<string, string>;
  version: string;
  /** How long start may take to READY=1 (emulated CPUs are slow). */
  readyTimeout: number;
}

/** Run the check; fails the calling test with serve's stderr when READY=1 does not arrive in time. */
export async function checkServe(o: ServeCheck): Promise<void> {
  const config = join(o.work, "config.yaml");
  const init = await exec(
    [...o.cmd, "init", "--config", config, "--data-dir", join(o.work, "data"), "--apps-dir", join(o.work, "apps")],
    {
      env: o.env,
    },
  );
  expect(init.stderr).toBe("");
  expect(init.code).toBe(0);
  const receiver = await notifyReceiver(join(o.work, "notify.sock"));
  try {
    const port = await freePort();
    const serve = Bun.spawn([...o.cmd, "serve", "--config", config], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        ...o.env,
        NOTIFY_SOCKET: join(o.work, "notify.sock"),
        SUNDECK_MANAGEMENT_PORT: String(port),
        SUNDECK_TLS_MODE: "off",
        SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
      },
      stdout: "ignore",
      stderr: "pipe",
    });
    const lines = receiver.lines;
    const ready = await until(() => lines.find((l) => l.startsWith("READY=1")), {
      timeout: o.readyTimeout,
      every: 100,
      what: "READY=1",
    }).catch(async (e) => {
      serve.kill("SIGKILL");
      throw new Error(`${e.message}: ${await new Response(serve.stderr).text()}`);
    });
    expect(ready).toBe(`READY=1|STATUS=serving on http://127.0.0.1:${port}`);
    const health = await fetch(`http://127.0.0.1:${port}/api/health`);
    expect(await health.json()).toEqual({ status: "ok", version: o.version });
    serve.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    await until(() => lines.includes("STOPPING=1"), { what: "STOPPING=1" });
  } finally {
    await receiver.stop();
  }
}
