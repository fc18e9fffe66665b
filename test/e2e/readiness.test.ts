/**
 * "Healthy" means ready: a script that polls /api/health and deploys at its first 200 finds Docker detected and the
 * proxy listening, a fresh start of the compiled binary prints no warnings, and without Docker the CLI says why.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { connect } from "node:net";
import { join } from "node:path";
import { freePort } from "../helpers/apps";
import { binary, runCli, startBinary } from "../helpers/binary";
import { ensureTestImages, removeProject, requireDocker } from "../helpers/docker";
import { tempDir } from "../helpers/tmp";

const SLUG = "e2e-ready";
const dir = tempDir();
const config = join(dir, "config.yaml");
let proxyPort: number;
let apiPort: number;
let key: string;

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  await removeProject(`sundeck-${SLUG}`);
  proxyPort = await freePort();
  apiPort = await freePort();
  const init = await runCli(["init", "--config", config, "--data-dir", join(dir, "data"), "--apps-dir", join(dir, "apps")]);
  expect(init.code).toBe(0);
  const text = await Bun.file(config).text();
  await Bun.write(
    config,
    `${text
      .replace(/^listen_addr:.*$/m, "")
      .replace(/^management_port:.*$/m, "")
      .replace(/^ {2}mode:.*$/m, "  mode: off")}\nlisten_addr: 127.0.0.1:${proxyPort}\nmanagement_port: ${apiPort}\n`,
  );
  const user = await runCli([
    "users",
    "create",
    "--username",
    "ops",
    "--role",
    "admin",
    "--password",
    "correct-horse",
    "--config",
    config,
  ]);
  expect(user.code).toBe(0);
  const k = await runCli(["apikey", "create", "--username", "ops", "--name", "script", "--config", config]);
  expect(k.code).toBe(0);
  key = /sd_[0-9a-f]{64}/.exec(k.stdout)![0];
});
afterAll(async () => {
  await removeProject(`sundeck-${SLUG}`);
});

/** Whether a TCP connection to the port is accepted. */
const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

/** What a deploy script does: poll health as fast as it can, and act on the first 200. */
async function firstHealthy(base: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await fetch(`${base}/api/health`).catch(() => null);
    if (r?.status === 200) return;
    if (Date.now() > deadline) throw new Error("health never answered 200");
    await Bun.sleep(2);
  }
}

describe("a fresh start", () => {
  it("is ready at the first 200 from /api/health: Docker detected, the proxy listening, no warnings printed", async () => {
    const proc = Bun.spawn([binary(), "serve", "--config", config], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    try {
      const base = `http://127.0.0.1:${apiPort}`;
      await firstHealthy(base);
      const [proxyUp, deploy] = await Promise.all([
        accepts(proxyPort),
        fetch(`${base}/api/apps/deploy`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({
            slug: SLUG,
            compose: 'services:\n  job:\n    image: sundeck-test/busybox:latest\n    command: ["sh", "-c", "exit 0"]\n',
          }),
        }),
      ]);
      expect(proxyUp).toBe(true);
      expect(`${deploy.status} ${await deploy.text()}`).toStartWith("202 ");
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    const [stdout, stderr] = await out;
    const warnings = `${stdout}\n${stderr}`.split("\n").filter((l) => /warn/i.test(l));
    expect(warnings).toEqual([]);
  });
});

describe("git sync at the first 200", () => {
  it("judges a push notification (401 for a bad signature, 202 for a good one) and takes sync-now", async () => {
    const secret = "first-push-secret";
    const closed = await freePort();
    const gitConfig = join(dir, "config-git.yaml");
    // no remote answers: what is checked is that the routes answer as they will, not the sync itself
    await Bun.write(
      gitConfig,
      (await Bun.file(config).text()).replace(
        /^git_sync:\n(?: {2}.*\n)*/m,
        `git_sync:\n  enabled: true\n  remote: http://127.0.0.1:${closed}/apps.git\n  webhook_secret: ${secret}\n  poll_enabled: false\n`,
      ),
    );
    const proc = Bun.spawn([binary(), "serve", "--config", gitConfig], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      const base = `http://127.0.0.1:${apiPort}`;
      await firstHealthy(base);
      const body = JSON.stringify({ ref: "refs/heads/main" });
      const sign = (key: string) => `sha256=${new Bun.CryptoHasher("sha256", key).update(body).digest("hex")}`;
      const push = (sig: string) =>
        fetch(`${base}/api/git/webhook`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-hub-signature-256": sig },
          body,
        });
      const [bad, good, now] = await Promise.all([
        push(sign("wrong-secret")),
        push(sign(secret)),
        fetch(`${base}/api/git/sync-now`, { method: "POST", headers: { authorization: `Bearer ${key}` } }),
      ]);
      expect(bad.status).toBe(401);
      expect(good.status).toBe(202);
      expect(`${now.status} ${await now.text()}`).toStartWith("202");
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  });
});

describe("a server without Docker", () => {
  it("refuses a deploy with 503 naming what is missing, and the CLI prints that reason", async () => {
    const port = await freePort();
    const server = await startBinary(["--config", config], {
      env: { DOCKER_HOST: `unix://${join(dir, "no-docker.sock")}`, SUNDECK_LISTEN_ADDR: `127.0.0.1:${port}` },
    });
    try {
      const app = join(dir, "cli-app");
      await Bun.write(join(app, "docker-compose.yml"), "services:\n  web:\n    image: sundeck-test/web:latest\n");
      const home = join(dir, "home");
      const r = await runCli(["apply", "-d", app], {
        env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), SUNDECK_URL: server.url, SUNDECK_API_KEY: key },
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("Service Unavailable: docker unavailable: the docker engine is not reachable");
    } finally {
      await server.stop();
    }
  });
});
