/**
 * `sundeck doctor` on a real config in a temp dir, against the real Docker engine: the all-ok host, then each blocking
 * condition broken on purpose (engine gone, engine hanging, a port taken, a data dir that cannot be written, an expired
 * certificate, a skewed clock), and the ports of a running Sundeck reported as ours.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { stringify } from "yaml";
import { startBinary } from "../../helpers/binary";
import { MAIN } from "../../helpers/cli";
import { opensslCert } from "../../helpers/tls";
import { tempDir } from "../../helpers/tmp";

interface Check {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

const root = tempDir("sundeck-doctor-");
let timeServer: ReturnType<typeof Bun.serve>;
let timeUrl = "";
/** What the time server's Date header is off by, ms. */
let skewMs = 0;

beforeAll(() => {
  timeServer = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => new Response(null, { headers: { date: new Date(Date.now() + skewMs).toUTCString() } }),
  });
  timeUrl = `http://127.0.0.1:${timeServer.port}/`;
});
afterAll(() => timeServer?.stop(true));

/** A port free right now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen({ host: "127.0.0.1", port: 0 }, r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(() => r(undefined)));
  return port;
}

/** A config file in its own temp dir: TLS off, proxy and management on free loopback ports. */
async function makeConfig(
  over: Record<string, unknown> = {},
): Promise<{ path: string; dir: string; proxyPort: number; mgmtPort: number }> {
  const dir = join(root, `c${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(dir);
  const proxyPort = await freePort();
  const mgmtPort = await freePort();
  const cfg = {
    data_dir: join(dir, "data"),
    apps_dir: join(dir, "apps"),
    listen_addr: `127.0.0.1:${proxyPort}`,
    management_addr: "127.0.0.1",
    management_port: mgmtPort,
    tls: { mode: "off" },
    master_secret: "doctor-test-secret-0123456789",
    ...over,
  };
  const path = join(dir, "config.yaml");
  writeFileSync(path, stringify(cfg), { mode: 0o600 });
  return { path, dir, proxyPort, mgmtPort };
}

async function doctor(
  config: string | null,
  opts: { env?: Record<string, string>; text?: boolean; cwd?: string } = {},
): Promise<{ code: number; checks: Check[]; ok: boolean; stdout: string; ms: number }> {
  const t0 = performance.now();
  const p = Bun.spawn(
    [
      process.execPath,
      MAIN,
      "doctor",
      ...(config ? ["--config", config] : []),
      "--time-url",
      timeUrl,
      ...(opts.text ? [] : ["--output", "json"]),
    ],
    {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...opts.env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const ms = performance.now() - t0;
  if (opts.text) return { code, checks: [], ok: code === 0, stdout, ms };
  let parsed: { checks: Check[]; ok: boolean };
  try {
    parsed = JSON.parse(stdout);
  } catch {
    throw new Error(`doctor printed no JSON (exit ${code}): ${stdout}\n${stderr}`);
  }
  return { code, ...parsed, stdout, ms };
}

const byName = (checks: Check[], name: string) => {
  const c = checks.find((x) => x.name === name);
  if (!c) throw new Error(`no check ${name} in ${JSON.stringify(checks.map((x) => x.name))}`);
  return c;
};

describe("sundeck doctor", () => {
  test("a healthy host: exit 0, every check ok but the missing domain, JSON shape", async () => {
    const cfg = await makeConfig();
    const r = await doctor(cfg.path);
    expect(r.code).toBe(0);
    expect(r.ok).toBe(true);
    expect(Object.keys(JSON.parse(r.stdout)).sort()).toEqual(["checks", "ok"]);
    for (const c of r.checks) {
      expect(Object.keys(c).sort()).toEqual(["detail", "name", "status"]);
      expect(["ok", "warn", "fail"]).toContain(c.status);
      expect(c.detail.length).toBeGreaterThan(0);
    }
    const status = Object.fromEntries(r.checks.map((c) => [c.name, c.status]));
    expect(status).toMatchObject({
      "docker engine": "ok",
      "docker compose": "ok",
      "docker socket": "ok",
      [`port ${cfg.proxyPort} (proxy)`]: "ok",
      [`port ${cfg.mgmtPort} (management)`]: "ok",
      dns: "warn",
      certificates: "ok",
      clock: "ok",
      "data dir": "ok",
      "apps dir": "ok",
      config: "ok",
    });
    expect(byName(r.checks, "docker engine").detail).toMatch(/^engine \S+, API 1\.\d+$/);
    expect(byName(r.checks, "docker compose").detail).toMatch(/^(v2 plugin|v1 \(docker-compose\)), version \d+\.\d+/);
    expect(byName(r.checks, "disk (data_dir)").detail).toContain("free");
    expect(byName(r.checks, "disk (docker root)").detail).toMatch(/^\/\S+: [\d.]+ [GM]iB free \([\d.]+ %\)/);
  }, 20_000);

  test("text output: one table, the failing line, exit 1", async () => {
    const cfg = await makeConfig();
    const r = await doctor(cfg.path, { text: true, env: { DOCKER_HOST: `unix://${join(cfg.dir, "gone.sock")}` } });
    expect(r.code).toBe(1);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(/^NAME\s+STATUS\s+DETAIL$/);
    expect(lines.find((l) => l.startsWith("docker engine"))).toMatch(/^docker engine\s+fail\s+docker engine not reachable at /);
    expect(r.stdout).toMatch(/\n2 checks failed: fix them before running Sundeck here\n$/);
  }, 20_000);

  test("docker stopped: no socket at DOCKER_HOST fails the engine and socket checks", async () => {
    const cfg = await makeConfig();
    const sock = join(cfg.dir, "dead.sock");
    const r = await doctor(cfg.path, { env: { DOCKER_HOST: `unix://${sock}` } });
    expect(r.code).toBe(1);
    expect(r.ok).toBe(false);
    expect(byName(r.checks, "docker engine")).toEqual({
      name: "docker engine",
      status: "fail",
      detail: `docker engine not reachable at ${sock}: is dockerd running?`,
    });
    expect(byName(r.checks, "docker socket")).toMatchObject({
      status: "fail",
      detail: `no socket at ${sock}: is dockerd running?`,
    });
    expect(byName(r.checks, "disk (docker root)").status).toBe("warn");
    // nothing else fails: the report names what blocks, not everything downstream of it
    expect(r.checks.filter((c) => c.status === "fail").map((c) => c.name)).toEqual(["docker engine", "docker socket"]);
  }, 20_000);

  test("an engine that accepts and never answers: fail within the deadline, the whole doctor under 5 s", async () => {
    const cfg = await makeConfig();
    const sock = join(cfg.dir, "hang.sock");
    const hang = Bun.listen({ unix: sock, socket: { data() {} } });
    try {
      const r = await doctor(cfg.path, { env: { DOCKER_HOST: `unix://${sock}` } });
      expect(r.code).toBe(1);
      expect(byName(r.checks, "docker engine")).toMatchObject({
        status: "fail",
        detail: `docker engine at ${sock} did not answer within 3s`,
      });
      expect(r.ms).toBeLessThan(5000 + 1500); // bun's own start-up on a loaded machine is the margin
    } finally {
      hang.stop(true);
    }
  }, 20_000);

  test("a port taken by another process fails, naming it", async () => {
    const cfg = await makeConfig();
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen({ host: "127.0.0.1", port: cfg.proxyPort }, r));
    try {
      const r = await doctor(cfg.path);
      expect(r.code).toBe(1);
      expect(byName(r.checks, `port ${cfg.proxyPort} (proxy)`)).toEqual({
        name: `port ${cfg.proxyPort} (proxy)`,
        status: "fail",
        detail: `127.0.0.1:${cfg.proxyPort} is taken by bun (pid ${process.pid}): stop it or change the listen address in the config`,
      });
      expect(byName(r.checks, `port ${cfg.mgmtPort} (management)`).status).toBe("ok");
    } finally {
      await new Promise((r) => holder.close(() => r(undefined)));
    }
  }, 20_000);

  test("the ports of a running Sundeck of this config are ours, not taken", async () => {
    const cfg = await makeConfig();
    const server = await startBinary(["--config", cfg.path], { timeout: 20_000 });
    try {
      const r = await doctor(cfg.path);
      expect(r.checks.filter((c) => c.status === "fail")).toEqual([]);
      expect(r.code).toBe(0);
      expect(byName(r.checks, `port ${cfg.mgmtPort} (management)`)).toMatchObject({ status: "ok" });
      expect(byName(r.checks, `port ${cfg.mgmtPort} (management)`).detail).toMatch(
        new RegExp(`^127\\.0\\.0\\.1:${cfg.mgmtPort} held by the running Sundeck \\S+ \\(pid ${server.proc.pid}\\)$`),
      );
      expect(byName(r.checks, `port ${cfg.proxyPort} (proxy)`)).toMatchObject({
        status: "ok",
        detail: `127.0.0.1:${cfg.proxyPort} held by the running Sundeck (pid ${server.proc.pid})`,
      });
    } finally {
      await server.stop();
    }
  }, 30_000);

  test("a data dir that cannot be created or written fails (as root too)", async () => {
    // under a regular file: no user, root included, can create it
    const blocker = join(root, "a-file");
    writeFileSync(blocker, "");
    const cfg = await makeConfig({ data_dir: join(blocker, "data") });
    const r = await doctor(cfg.path);
    expect(r.code).toBe(1);
    expect(byName(r.checks, "data dir")).toEqual({
      name: "data dir",
      status: "fail",
      detail: `${join(blocker, "data")} cannot be created: ${blocker} is not a directory`,
    });
    expect(byName(r.checks, "apps dir").status).toBe("ok");
  }, 20_000);

  test.skipIf(process.getuid?.() === 0)(
    "an existing data dir without write permission fails (non-root only)",
    async () => {
      const cfg = await makeConfig();
      mkdirSync(join(cfg.dir, "data"));
      chmodSync(join(cfg.dir, "data"), 0o500);
      try {
        const r = await doctor(cfg.path);
        expect(r.code).toBe(1);
        expect(byName(r.checks, "data dir")).toMatchObject({
          status: "fail",
          detail: `${join(cfg.dir, "data")} is not writable: EACCES`,
        });
      } finally {
        chmodSync(join(cfg.dir, "data"), 0o700);
      }
    },
    20_000,
  );

  test.skipIf(process.getuid?.() !== 0 || !Bun.which("setpriv"))(
    "run as an unprivileged user: socket refused (naming the group), port 80 not bindable, data dir not writable",
    async () => {
      const cfg = await makeConfig({ tls: { mode: "local" }, http_listen_addr: "127.0.0.1:80" });
      mkdirSync(join(cfg.dir, "data"), { mode: 0o700 }); // root's, as a data dir made by a root install would be
      chmodSync(root, 0o711); // mkdtemp's 0700 would hide the config from the user
      chownSync(cfg.dir, 65534, 65534);
      chownSync(cfg.path, 65534, 65534);
      const p = Bun.spawn(
        [
          "setpriv",
          "--reuid=65534",
          "--regid=65534",
          "--clear-groups",
          process.execPath,
          MAIN,
          "doctor",
          "--config",
          cfg.path,
          "--time-url",
          timeUrl,
          "--output",
          "json",
        ],
        { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cfg.dir }, stdin: "ignore", stdout: "pipe", stderr: "pipe" },
      );
      const [stdout, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
      expect(code).toBe(1);
      const { checks } = JSON.parse(stdout) as { checks: Check[] };
      const socket = byName(checks, "docker socket");
      expect(socket.status).toBe("fail");
      expect(socket.detail).toMatch(
        /^\/var\/run\/docker\.sock \(root:\S+ 0660\) refuses uid 65534: run as root or add the user to group \S+$/,
      );
      expect(byName(checks, "docker engine").detail).toContain("refused access (permission denied)");
      expect(byName(checks, "port 80 (http)")).toEqual({
        name: "port 80 (http)",
        status: "warn",
        detail: "127.0.0.1:80: this user may not bind it (ports below 1024 need root or CAP_NET_BIND_SERVICE)",
      });
      expect(byName(checks, "data dir")).toEqual({
        name: "data dir",
        status: "fail",
        detail: `${join(cfg.dir, "data")} is not writable: EACCES`,
      });
    },
    20_000,
  );

  test("an expired certificate fails, one expiring within 14 days warns", async () => {
    const cfg = await makeConfig({ tls: { mode: "local" }, listen_addr: "127.0.0.1:0", http_listen_addr: "" });
    const certs = join(cfg.dir, "data", "certs", "local");
    const work = join(cfg.dir, "openssl");
    mkdirSync(work);
    const place = (host: string, days: number) => {
      mkdirSync(join(certs, host), { recursive: true });
      const pair = opensslCert(work, { sans: [host], days });
      writeFileSync(join(certs, host, "cert.pem"), pair.cert);
      writeFileSync(join(certs, host, "key.pem"), pair.key);
    };
    place("soon.test", 5);
    let r = await doctor(cfg.path);
    expect(byName(r.checks, "certificates")).toMatchObject({ status: "warn" });
    expect(byName(r.checks, "certificates").detail).toMatch(/^1 on disk; soonest expiry in 4 days: soon\.test \(local\)/);
    expect(r.code).toBe(0);

    place("old.test", -1);
    r = await doctor(cfg.path);
    expect(byName(r.checks, "certificates")).toEqual({
      name: "certificates",
      status: "fail",
      detail: "expired: old.test (local)",
    });
    expect(r.code).toBe(1);
  }, 20_000);

  test("clock skew: 5 s warns, 5 min fails", async () => {
    const cfg = await makeConfig();
    try {
      skewMs = 5000;
      let r = await doctor(cfg.path);
      expect(byName(r.checks, "clock").status).toBe("warn");
      expect(byName(r.checks, "clock").detail).toMatch(/^\d+\.\d s behind 127\.0\.0\.1:\d+: enable NTP$/);
      skewMs = -300_000;
      r = await doctor(cfg.path);
      expect(byName(r.checks, "clock").status).toBe("fail");
      expect(byName(r.checks, "clock").detail).toMatch(/^(29\d|30\d)\.\d s ahead of 127\.0\.0\.1:\d+: sync the clock \(NTP\)$/);
      expect(r.code).toBe(1);
    } finally {
      skewMs = 0;
    }
  }, 20_000);

  test("an invalid config is a failing check, and the Docker checks still run", async () => {
    const cfg = await makeConfig();
    writeFileSync(cfg.path, "listen_addr: nonsense\n");
    const r = await doctor(cfg.path);
    expect(r.code).toBe(1);
    expect(byName(r.checks, "config")).toMatchObject({ status: "fail" });
    expect(byName(r.checks, "config").detail).toMatch(/^config: listen_addr: must be an address/);
    expect(byName(r.checks, "docker engine").status).toBe("ok");
  }, 20_000);

  test("the domain: resolving to this host is ok; not resolving with tls.mode auto fails; a world-readable config warns", async () => {
    const tls = { mode: "auto", email: "ops@example.com" };
    const cfg = await makeConfig({ domain: "localhost", tls, http_listen_addr: "127.0.0.1:0" });
    chmodSync(cfg.path, 0o644);
    let r = await doctor(cfg.path);
    expect(byName(r.checks, "dns").status).toBe("ok");
    expect(byName(r.checks, "dns").detail).toMatch(/^localhost -> (127\.0\.0\.1|::1)(, \S+)* \(this host\)$/);
    expect(byName(r.checks, "config")).toEqual({
      name: "config",
      status: "warn",
      detail: `${cfg.path}: the file is readable by other users and holds the master secret: chmod 600`,
    });
    expect(byName(r.checks, "certificates")).toMatchObject({ status: "warn" });
    expect(byName(r.checks, "certificates").detail).toContain("none for localhost yet");

    const gone = await makeConfig({ domain: "doctor-test.invalid", tls, http_listen_addr: "127.0.0.1:0" });
    r = await doctor(gone.path);
    expect(r.code).toBe(1);
    expect(byName(r.checks, "dns")).toMatchObject({ status: "fail" });
    expect(byName(r.checks, "dns").detail).toMatch(/^doctor-test\.invalid does not resolve \(.+\): add an A\/AAAA record$/);
  }, 20_000);

  test("with no config file the embedded default is checked and nothing is written", async () => {
    const cwd = join(root, "empty-cwd");
    mkdirSync(cwd);
    const r = await doctor(null, { cwd, env: { SUNDECK_CONFIG: "" } });
    expect(byName(r.checks, "config").detail).toMatch(/^embedded default \(no config file\)/);
    expect(byName(r.checks, "data dir")).toMatchObject({
      status: "ok",
      detail: `${join(cwd, "sundeck-data")} does not exist yet; sundeck serve creates it`,
    });
    expect(readdirSync(cwd)).toEqual([]);
  }, 20_000);
});
