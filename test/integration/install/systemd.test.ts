/**
 * The real systemd path, in a container running systemd as PID 1 (systemd-box.ts): `curl .../install.sh | sh`
 * installs the unit and starts it as the `sundeck` user under the unit's hardening; systemd only calls it started
 * once READY=1 arrived (Type=notify); `sundeck upgrade` restarts it through systemctl, and rolls back by itself when
 * the new binary dies before it is ready; the service deploys an app (docker group, compose) under its seccomp filter;
 * `install.sh --uninstall` stops and removes it, `--purge` the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureTestImages, removeProject } from "../../helpers/docker";
import { buildRelease, TARGET, writeSums } from "../../helpers/release";
import { tempDir } from "../../helpers/tmp";
import { type Box, boxUnsupported, startBox } from "./systemd-box";

const OLD = "0.9.0-test";
const NEW = "0.9.1-test";
const BASE = "http://127.0.0.1:8000";
const BIN = "/usr/local/bin/sundeck";
const site = tempDir("sundeck-release-");
const app = tempDir("sundeck-box-app-");
const SLUG = `boxapp${process.pid}`;
let box: Box;

// this test runs wherever the suite runs (Debian 12 with Docker); a host it cannot run on is an error, not a skip
const unsupported = await boxUnsupported();
if (unsupported) throw new Error(`the systemd box cannot run here: ${unsupported}`);

/** Run in the box; a non-zero exit fails with what it printed and the journal. */
async function ok(script: string): Promise<string> {
  const r = await box.sh(script);
  if (r.code !== 0) throw new Error(`\`${script}\` exited ${r.code}: ${r.stderr}${r.stdout}\n${await box.logs()}`);
  return r.stdout.trim();
}
const show = async (prop: string) => ok(`systemctl show sundeck.service -p ${prop} --value`);
const health = async () => (await box.sh(`curl -fsS http://127.0.0.1:8443/api/health`)).stdout;
const install = (args: string) => box.sh(`curl -fsSL ${BASE}/install.sh | sh -s -- --base-url ${BASE} ${args}`);

beforeAll(async () => {
  await buildRelease(site, NEW);
  await buildRelease(join(site, `v${OLD}`), OLD);
  // a release whose binary runs `version` but dies at `serve`: it never tells systemd it is ready
  const broken = join(site, "v9.9.9-broken");
  mkdirSync(broken, { recursive: true });
  writeFileSync(
    join(broken, TARGET),
    `#!/bin/sh\n[ "$1" = version ] && { echo "sundeck 9.9.9-broken (test)"; exit 0; }\necho "crash" >&2\nexit 3\n`,
    { mode: 0o755 },
  );
  writeSums(broken, [TARGET]);

  await ensureTestImages();
  writeFileSync(
    join(app, "docker-compose.yml"),
    "services:\n  web:\n    image: sundeck-test/web:latest\n    stop_grace_period: 1s\n",
  );
  box = await startBox({ [site]: "/srv/release", [app]: "/srv/app" });
  // the release server runs in the box, where install.sh and `sundeck upgrade` reach it as a mirror would be
  await ok("systemd-run --unit=release-http python3 -m http.server --directory /srv/release --bind 127.0.0.1 8000");
  await ok(
    `for i in $(seq 1 100); do curl -fsS -o /dev/null ${BASE}/SHA256SUMS && exit 0; sleep 0.1; done; echo "release server not answering"; exit 1`,
  );
}, 150_000);

afterAll(async () => {
  await box?.remove();
  await removeProject(`sundeck-${SLUG}`);
});

describe("install.sh under systemd", () => {
  it("installs, starts the service as the sundeck user with the unit's hardening, and systemd sees it ready", async () => {
    const r = await install(`--version ${OLD}`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("sundeck.service is enabled and running");
    expect(await ok("systemctl is-enabled sundeck.service")).toBe("enabled");
    // Type=notify: "active" (not "activating") means READY=1 reached systemd from the process it started
    expect(await show("Type")).toBe("notify");
    expect(await ok("systemctl is-active sundeck.service")).toBe("active");
    expect(await show("StatusText")).toBe("serving on http://127.0.0.1:8443");
    expect(await show("NRestarts")).toBe("0");
    expect(JSON.parse(await health())).toEqual({ status: "ok", version: OLD });

    const pid = await show("MainPID");
    const status = await ok(`cat /proc/${pid}/status`);
    const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "m").exec(status)?.[1].trim();
    expect(field("Uid")?.split(/\s+/)[0]).toBe(await ok("id -u sundeck"));
    expect(field("Gid")?.split(/\s+/)[0]).toBe(await ok("id -g sundeck"));
    // the docker group reaches the socket; CAP_NET_BIND_SERVICE (bit 10) is the only capability, and it cannot gain any
    expect(field("Groups")?.split(/\s+/)).toContain(await ok("getent group docker | cut -d: -f3"));
    expect(field("CapEff")).toBe("0000000000000400");
    expect(field("CapBnd")).toBe("0000000000000400");
    expect(field("NoNewPrivs")).toBe("1");
    // seccomp is on, with the unit's system call allow list (@system-service: no reboot, no mount)
    expect(field("Seccomp")).toBe("2");
    const allowed = (await show("SystemCallFilter")).split(/\s+/);
    expect(allowed).toContain("openat");
    expect(allowed).not.toContain("reboot");
    expect(allowed).not.toContain("mount");
    // ...which is enough to hold port 80 without root
    expect(await ok("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:80/")).toMatch(/^[1-5]\d\d$/);
    // ProtectSystem=strict: the binary cannot be written by the service, its data dir can
    expect(await ok(`nsenter -t ${pid} -m sh -c 'touch /usr/local/bin/x 2>&1 || true'`)).toContain("Read-only file system");
  }, 60_000);

  it("re-runs without restarting anything", async () => {
    const pid = await show("MainPID");
    const r = await install(`--version ${OLD}`);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${BIN} is already this build`);
    expect(r.stdout).toContain("keeping /etc/systemd/system/sundeck.service");
    expect(await show("MainPID")).toBe(pid);
  }, 60_000);
});

describe("sundeck upgrade under systemd", () => {
  it("swaps the binary, restarts through systemctl and waits for the new version", async () => {
    const pid = await show("MainPID");
    const r = await box.sh(`${BIN} upgrade --timeout 60`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("restarting: systemctl restart sundeck.service");
    expect(r.stdout).toContain(`sundeck ${NEW} is running and healthy`);
    expect(await show("MainPID")).not.toBe(pid);
    expect(await ok("systemctl is-active sundeck.service")).toBe("active");
    expect(JSON.parse(await health()).version).toBe(NEW);
    expect(await ok(`${BIN}.previous version`)).toStartWith(`sundeck ${OLD} `);
  }, 90_000);

  it("rolls back by itself when the new binary dies before it is ready", async () => {
    const r = await box.sh(`${BIN} upgrade --version 9.9.9-broken --timeout 30`);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("sundeck: upgrade to 9.9.9-broken failed (restart failed: ");
    expect(r.stderr).toContain(`rolled back to ${NEW}`);
    expect(r.stdout).toContain(`rolled back: sundeck ${NEW} is running`);
    // systemd ran it, and it died before READY=1
    expect(await ok("journalctl -u sundeck.service --no-pager -o cat")).toContain("crash");
    expect(await ok("systemctl is-active sundeck.service")).toBe("active");
    expect(await ok(`${BIN} version`)).toStartWith(`sundeck ${NEW} `);
    expect(JSON.parse(await health()).version).toBe(NEW);
  }, 120_000);
});

describe("the service at work", () => {
  it("deploys and removes an app as the sundeck user, through the docker group and compose, under its seccomp filter", async () => {
    const cfg = "--config /etc/sundeck/config.yaml";
    const pid = await show("MainPID");
    await ok(`${BIN} users create ${cfg} --username admin --password correct-horse-battery-9 --role super_admin`);
    const key = (await ok(`${BIN} apikey create ${cfg} --username admin --name test`)).split("\n").pop();
    await ok(`${BIN} context add box --url http://127.0.0.1:8443 --api-key ${key}`);
    const r = await box.sh(`${BIN} apply -f /srv/app/docker-compose.yml --name ${SLUG}`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`deployed ${SLUG} version 1`);
    expect(await ok(`${BIN} status --app ${SLUG}`)).toContain(`${SLUG}: running, version 1`);
    expect(await ok(`${BIN} remove --name ${SLUG}`)).toContain(`removed ${SLUG}`);
    // the same process did it all: nothing it needed was refused by the filter and killed it
    expect(await show("MainPID")).toBe(pid);
    expect(await ok("systemctl is-active sundeck.service")).toBe("active");
  }, 120_000);
});

describe("install.sh --uninstall under systemd", () => {
  it("stops the service cleanly and removes the unit and the binary, keeping config, data and user", async () => {
    const r = await install("--uninstall");
    expect(r.code).toBe(0);
    // SIGTERM, drained and exited 0 within TimeoutStopSec (a kill would say "timeout" or "signal")
    expect(await ok("journalctl -u sundeck.service --no-pager -o cat")).toContain("sundeck.service: Deactivated successfully.");
    expect((await box.sh("systemctl is-active sundeck.service")).stdout.trim()).toBe("inactive");
    expect(await ok("systemctl list-unit-files --no-legend sundeck.service | wc -l")).toBe("0");
    expect(await ok(`ls ${BIN} ${BIN}.previous /etc/systemd/system/sundeck.service 2>/dev/null | wc -l`)).toBe("0");
    expect(await ok("ls /etc/sundeck/config.yaml /var/lib/sundeck/sundeck.db | wc -l")).toBe("2");
    expect((await box.sh("id sundeck")).code).toBe(0);
    expect((await box.sh("curl -fsS http://127.0.0.1:8443/api/health")).code).not.toBe(0);
  }, 60_000);

  it("with --purge also removes the config, the data and apps dirs and the user", async () => {
    const r = await install("--uninstall --purge");
    expect(r.code).toBe(0);
    expect(await ok("ls -d /etc/sundeck /var/lib/sundeck 2>/dev/null | wc -l")).toBe("0");
    expect((await box.sh("id sundeck")).code).not.toBe(0);
  }, 60_000);
});
