/**
 * Proves readiness still means ready with a fast start: `sundeck serve` is executed with 20 apps deployed, and at its
 * first 200 from /api/health Docker is detected, the proxy routes every app and a deploy is accepted (never a 503),
 * while nothing slow ran on the way (no compose spawned: the detection answer was kept for unchanged binaries, and
 * version rows kept before routing was stored get it once). A changed compose binary is detected again before ready.
 * Compose and the docker CLI run through logging wrappers on PATH; the engine, compose, SQLite and HTTP are real.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort } from "../../helpers/apps";
import { ensureTestImages, removeProject, requireDocker } from "../../helpers/docker";
import { Client, until } from "../../helpers/http";
import { PASSWORD } from "../../helpers/server";
import { tempDir } from "../../helpers/tmp";

const MAIN = resolve(import.meta.dir, "../../../src/main.ts");
const APPS = 20;
const slugs = Array.from({ length: APPS }, (_, i) => `ready-${process.pid}-${i + 1}`);
// a routed service on the shared public network only: 20 apps need no network of their own
const compose = (slug: string) => `services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    networks: [sundeck-public]
    labels:
      sundeck.domain: ${slug}.ready.test
      sundeck.port: "8080"
`;

const dir = tempDir();
const wrappers = join(dir, "bin");
const calls = join(dir, "calls");
const config = join(dir, "config.yaml");
let apiPort = 0;
let proxyPort = 0;
let root: Client;

/** A wrapper on PATH that logs `<name> <args>` and runs the real binary. */
function wrap(name: string) {
  const real = Bun.which(name);
  if (!real) return;
  const file = join(wrappers, name);
  writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> ${calls}\nexec ${real} "$@"\n`);
  chmodSync(file, 0o755);
}

/** The compose version probes logged so far (`docker compose version`, `docker-compose version`). */
const probes = () =>
  (existsSync(calls) ? readFileSync(calls, "utf8").split("\n") : []).filter((l) => /^docker(-compose| compose) version/.test(l))
    .length;

interface Started {
  proc: Bun.Subprocess;
  /** Compose probes logged when the first 200 came. */
  probesAtReady: number;
  firstStatus: number;
  /** Docker as /api/system/info tells it right after the first 200 (once a user exists). */
  docker: string | undefined;
  /** Status of each app's host through the proxy, asked at once after the first 200. */
  routed: number[];
  /** Status of a deploy sent at once after the first 200. */
  deploy: number;
}

/** Exec the server and wait for its first 200 from /api/health; then ask the proxy for every app and deploy one. */
async function start(opts: { probeAfterReady?: boolean } = {}): Promise<Started> {
  const proc = Bun.spawn([process.execPath, MAIN, "serve", "--config", config], {
    env: { PATH: `${wrappers}:${process.env.PATH}`, HOME: process.env.HOME ?? "/root" },
    stdout: "ignore",
    stderr: "inherit",
  });
  let probesAtReady = 0;
  // the API listens only when ready: its first answer must be the 200
  const firstStatus = await until(
    async () => {
      const r = await fetch(`http://127.0.0.1:${apiPort}/api/health`).catch(() => null);
      if (!r) return null;
      probesAtReady = probes();
      await r.text();
      return r.status;
    },
    { timeout: 60_000, every: 5, what: "the first answer from /api/health" },
  );
  const docker = root ? (await root.get("/api/system/info")).json?.docker : undefined;
  const routed = await Promise.all(
    slugs.map((slug) =>
      fetch(`http://127.0.0.1:${proxyPort}/`, { headers: { host: `${slug}.ready.test` } }).then(async (r) => {
        await r.text();
        return r.status;
      }),
    ),
  );
  const deploy = opts.probeAfterReady
    ? (await root.post("/api/apps/deploy", { slug: slugs[0], compose: compose(slugs[0]) })).status
    : 0;
  return { proc, probesAtReady, firstStatus, docker, routed, deploy };
}

async function stop(p: Bun.Subprocess) {
  p.kill("SIGTERM");
  await p.exited;
}

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  mkdirSync(wrappers, { recursive: true });
  wrap("docker");
  wrap("docker-compose");
  apiPort = await freePort();
  proxyPort = await freePort();
  writeFileSync(
    config,
    [
      `data_dir: ${join(dir, "data")}`,
      `apps_dir: ${join(dir, "apps")}`,
      `listen_addr: "127.0.0.1:${proxyPort}"`,
      `management_addr: "127.0.0.1"`,
      `management_port: ${apiPort}`,
      "master_secret: ready-test-master-secret-0123456789",
      'tls:\n  mode: "off"',
      "ratelimit:\n  requests: 100000\n  burst: 100000",
      "",
    ].join("\n"),
  );
  // the first start detects compose and keeps the answer; the 20 apps are deployed through the API, in parallel
  const first = await start();
  const setup = await new Client(`http://127.0.0.1:${apiPort}`).post("/api/setup", { username: "root", password: PASSWORD });
  expect(setup.status).toBe(201);
  root = new Client(`http://127.0.0.1:${apiPort}`, { cookie: setup.headers.get("set-cookie")!.match(/session=([^;]+)/)![1] });
  for (const slug of slugs) expect((await root.post("/api/apps/deploy", { slug, compose: compose(slug) })).status).toBe(202);
  await until(
    async () => {
      const apps = (await root.get("/api/apps")).json as any[];
      const done = apps.filter((a) => a.last_deploy?.status === "succeeded").length;
      const failed = apps.find((a) => a.last_deploy?.status === "failed");
      if (failed) throw new Error(`deploy of ${failed.slug} failed: ${failed.last_error}`);
      return done === APPS;
    },
    { timeout: 240_000, every: 250, what: "20 apps deployed" },
  );
  await stop(first.proc);
}, 300_000);

afterAll(async () => {
  await Promise.all(slugs.map((s) => removeProject(`sundeck-${s}`)));
});

describe("start to ready with 20 apps", () => {
  it("answers its first 200 with Docker detected and every app routed, without spawning compose", async () => {
    // rows from before routing was kept with each version: start fills them in once
    const db = new Database(join(dir, "data", "sundeck.db"));
    db.run("UPDATE compose_versions SET routing = NULL WHERE id % 2 = 0");
    db.close();
    const before = probes();

    const s = await start({ probeAfterReady: true });
    try {
      expect(s.firstStatus).toBe(200);
      expect(s.docker).toBe("ok");
      expect(s.routed).toEqual(slugs.map(() => 200));
      // a script that deploys as soon as /api/health answers is accepted, not told Docker is not ready
      expect(s.deploy).toBe(202);
      expect(s.probesAtReady).toBe(before);
    } finally {
      await stop(s.proc);
    }
    const kept = new Database(join(dir, "data", "sundeck.db"), { readonly: true });
    const missing = kept.query("SELECT count(*) AS n FROM compose_versions WHERE routing IS NULL").get() as { n: number };
    kept.close();
    expect(missing.n).toBe(0);
  }, 120_000);

  it("detects a changed compose binary again before its first 200", async () => {
    const before = probes();
    // another build of the wrapper: size, mtime and ctime change
    appendFileSync(join(wrappers, Bun.which("docker-compose") ? "docker-compose" : "docker"), "# upgraded\n");
    const s = await start();
    try {
      expect(s.firstStatus).toBe(200);
      expect(s.probesAtReady).toBeGreaterThan(before);
      expect(s.routed).toEqual(slugs.map(() => 200));
    } finally {
      await stop(s.proc);
    }
  }, 120_000);
});
