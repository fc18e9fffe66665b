/**
 * `sundeck upgrade` on an installed binary, with the service manager played by a restart script: a good release
 * swaps in and answers /api/health; a release that cannot start is rolled back by itself; a tampered one is refused.
 * Also the two start-up gates an upgrade relies on: systemd readiness (sd_notify) and the refusal of a database
 * written by a newer version (a downgrade).
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../../helpers/apps";
import { until } from "../../helpers/http";
import { buildRelease, exec, fakeHost, runInstaller, serveDir, TARGET, tamperedCopy, writeSums } from "../../helpers/release";
import { tempDir } from "../../helpers/tmp";
import { notifyReceiver } from "./notify-receiver";

const site = tempDir("sundeck-release-");
const OLD = "0.9.0-test";
const NEW = "0.9.1-test";
let server: ReturnType<typeof serveDir>;
const host = fakeHost({ systemd: false });
const work = tempDir("sundeck-upgrade-");
const pidFile = join(work, "serve.pid");
let env: Record<string, string>;
let port: number;

/** The service manager of the test: stop the running server (if any), start the installed binary. */
const RESTART = `#!/bin/sh
if [ -f "${pidFile}" ]; then
  pid=$(cat "${pidFile}")
  kill "$pid" 2>/dev/null
  while kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; do sleep 0.1; done
fi
"${host.bin}" serve --config "${host.config}" >>"${work}/serve.log" 2>&1 &
echo $! > "${pidFile}"
`;

const health = async () => {
  const res = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => null);
  return res?.ok ? ((await res.json()) as { version: string }) : null;
};
const version = async () => (await exec([host.bin, "version"])).stdout.trim();
const upgrade = (args: string[], timeout = 20) =>
  exec([host.bin, "upgrade", "--config", host.config, "--timeout", String(timeout), ...args], { env });

beforeAll(async () => {
  await buildRelease(site, NEW);
  await buildRelease(join(site, `v${OLD}`), OLD);
  tamperedCopy(join(site, `v${OLD}`), join(site, "tampered"));
  // a release whose binary runs `version` but dies at `serve`: it never becomes ready
  const broken = join(site, "v9.9.9-broken");
  mkdirSync(broken, { recursive: true });
  writeFileSync(
    join(broken, TARGET),
    `#!/bin/sh\n[ "$1" = version ] && { echo "sundeck 9.9.9-broken (test)"; exit 0; }\necho "crash" >&2\nexit 3\n`,
  );
  writeSums(broken, [TARGET]);
  server = serveDir(site);

  port = await freePort();
  writeFileSync(join(work, "restart"), RESTART);
  chmodSync(join(work, "restart"), 0o755);
  env = {
    SUNDECK_MANAGEMENT_PORT: String(port),
    SUNDECK_TLS_MODE: "off",
    SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
    SUNDECK_UPGRADE_RESTART_COMMAND: join(work, "restart"),
  };
  const installed = await runInstaller(join(site, "install.sh"), host, ["--version", OLD, "--base-url", server.url]);
  expect(installed.code).toBe(0);
  expect((await exec([join(work, "restart")], { env })).code).toBe(0);
  await until(async () => (await health())?.version === OLD, { timeout: 20_000, what: "the installed server" });
}, 120_000);

afterAll(async () => {
  server?.stop();
  if (existsSync(pidFile)) await exec(["kill", readFileSync(pidFile, "utf8").trim()]);
});

describe("sundeck upgrade", () => {
  it("installs the latest release from where install.sh came from, keeps the previous binary, and waits until it is healthy", async () => {
    const r = await upgrade([]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`sundeck ${NEW} is running and healthy`);
    expect(await version()).toStartWith(`sundeck ${NEW} `);
    expect((await exec([`${host.bin}.previous`, "version"])).stdout).toStartWith(`sundeck ${OLD} `);
    expect((await health())?.version).toBe(NEW);
  }, 60_000);

  it("rolls back by itself when the new release does not become ready", async () => {
    const r = await upgrade(["--version", "9.9.9-broken", "--base-url", server.url], 8);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`sundeck: upgrade to 9.9.9-broken failed (not healthy within 8 s); rolled back to ${NEW}`);
    // it was started, and died
    expect(readFileSync(join(work, "serve.log"), "utf8")).toContain("crash");
    expect(await version()).toStartWith(`sundeck ${NEW} `);
    expect((await health())?.version).toBe(NEW);
  }, 90_000);

  it("refuses a download whose checksum does not match and leaves the binary alone", async () => {
    const before = readFileSync(host.bin);
    const r = await upgrade(["--base-url", `${server.url}/tampered`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`sundeck: checksum mismatch for ${TARGET}`);
    expect(readFileSync(host.bin).equals(before)).toBe(true);
    expect(existsSync(`${host.bin}.download`)).toBe(false);
  }, 30_000);
});

describe("start-up gates", () => {
  it("tells systemd READY=1 once /api/health answers, and STOPPING=1 on SIGTERM", async () => {
    const receiver = await notifyReceiver(join(work, "notify.sock"));
    const { lines } = receiver;
    const p = await freePort();
    const serve = Bun.spawn([host.bin, "serve", "--config", host.config], {
      env: { ...env, SUNDECK_MANAGEMENT_PORT: String(p), NOTIFY_SOCKET: join(work, "notify.sock"), SUNDECK_DATA_DIR: tempDir() },
      stdout: "ignore",
      stderr: "ignore",
    });
    const ready = await until(() => lines.find((l) => l.startsWith("READY=1")), { timeout: 20_000, what: "READY=1" });
    expect(ready).toBe(`READY=1|STATUS=serving on http://127.0.0.1:${p}`);
    // ready means the API answers at once
    expect((await fetch(`http://127.0.0.1:${p}/api/health`)).status).toBe(200);
    serve.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    await until(() => lines.includes("STOPPING=1"), { what: "STOPPING=1" });
    await receiver.stop();
  }, 60_000);

  it("under systemd, is not ready and exits when Docker is unreachable", async () => {
    const r = await exec([host.bin, "serve", "--config", host.config], {
      env: {
        ...env,
        SUNDECK_MANAGEMENT_PORT: String(await freePort()),
        SUNDECK_DATA_DIR: tempDir(),
        NOTIFY_SOCKET: join(work, "nobody.sock"),
        DOCKER_HOST: `unix://${join(work, "no-docker.sock")}`,
      },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("sundeck: not ready: docker unavailable: the docker engine is not reachable");
  }, 60_000);

  it("refuses to run on a database a newer version migrated (a downgrade), changing nothing", async () => {
    const dataDir = tempDir();
    const cfgEnv = { ...env, SUNDECK_DATA_DIR: dataDir, SUNDECK_MANAGEMENT_PORT: String(await freePort()) };
    // a command that opens the database creates it with every migration this binary knows
    expect((await exec([host.bin, "users", "list", "--config", host.config], { env: cfgEnv })).code).toBe(0);
    const db = new Database(join(dataDir, "sundeck.db"));
    db.run("INSERT INTO schema_migrations (tag, applied_at) VALUES ('9999_from_the_future', '2030-01-01T00:00:00Z')");
    db.close();
    const r = await exec([host.bin, "serve", "--config", host.config], { env: cfgEnv });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the database has migrations this sundeck does not know (9999_from_the_future)");
    const after = new Database(join(dataDir, "sundeck.db"));
    expect(after.query("SELECT tag FROM schema_migrations WHERE tag = '9999_from_the_future'").get()).toBeTruthy();
    after.close();
  }, 60_000);
});
