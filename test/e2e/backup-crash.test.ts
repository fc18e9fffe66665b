/**
 * kill -9 in the middle of a backup and of a restore, then a restart (the built binary, the real engine): the
 * interrupted run is marked failed and its half-written file is gone (only the good backup remains, matching its
 * sha256); the interrupted restore, which had stopped both replicas of the service, is marked failed and both run
 * again.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { Engine } from "../../src/docker/types";
import { type RunningBinary, runCli, startBinary } from "../helpers/binary";
import { dockerOk, ensureTestImages, removeProject, requireDocker } from "../helpers/docker";
import { Client, until } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

const SLUG = "e2e-backup-crash";
const dir = tempDir();
const config = join(dir, "config.yaml");
const backups = join(dir, "data", "backups");
const env = {
  SUNDECK_MANAGEMENT_PORT: "0",
  SUNDECK_TLS_MODE: "off",
  SUNDECK_LISTEN_ADDR: "127.0.0.1:0",
  SUNDECK_RATELIMIT_REQUESTS: "100000",
  SUNDECK_RATELIMIT_BURST: "100000",
};
const compose = `services:
  files:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    volumes:
      - store:/data
    stop_grace_period: 1s
    deploy:
      replicas: 2
volumes:
  store: {}
`;
let server: RunningBinary | undefined;
let key: string;

/** Every file under the backups dir, temp files included. */
function files(): string[] {
  try {
    return readdirSync(backups, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name));
  } catch {
    return [];
  }
}
let engine: Engine;
/** The service's replicas (the engine's view), the first one first. */
const replicas = async () =>
  (await engine.containers({ project: `sundeck-${SLUG}` })).sort((a, b) => (a.number ?? 0) - (b.number ?? 0));
const container = async () => (await replicas())[0].id;
/** Whether each replica runs. */
const running = async () => (await replicas()).map((c) => c.state === "running");

beforeAll(async () => {
  engine = await requireDocker();
  await ensureTestImages();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  expect(
    (await runCli(["init", "--config", config, "--data-dir", join(dir, "data"), "--apps-dir", join(dir, "apps")])).code,
  ).toBe(0);
  expect(
    (await runCli(["users", "create", "--config", config, "--username", "ops", "--password", "ops-password", "--role", "admin"]))
      .code,
  ).toBe(0);
  key = (await runCli(["apikey", "create", "--config", config, "--username", "ops", "--name", "test"])).stdout.trim();
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
}, 60_000);

describe("kill -9 during a backup and a restore", () => {
  it("leaves no half file counted as a backup, marks both failed, and the app running", async () => {
    server = await startBinary(["--config", config], { env });
    let api = new Client(server.url, { bearer: key });
    expect((await api.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
    await until(async () => (await api.get(`/api/apps/${SLUG}`)).json?.status === "running", { timeout: 60_000, what: "app up" });
    expect(await running()).toEqual([true, true]);
    // 200 MiB that gzip cannot shrink: the run and the restore take seconds, long enough to be killed in the middle
    await dockerOk(
      "exec",
      await container(),
      "sh",
      "-c",
      "dd if=/dev/urandom of=/data/big bs=1048576 count=200 2>/dev/null; echo kept > /data/k",
    );
    const cfg = (
      await api.post(`/api/apps/${SLUG}/backups/configs`, { strategy: "volume", service: "files", target: { kind: "local" } })
    ).json;
    const runs = () => api.get(`/api/apps/${SLUG}/backups/runs`).then((r) => r.json as any[]);

    const good = (await api.post(`/api/backups/configs/${cfg.id}/run`)).json.run_id;
    const ok = await until(async () => (await runs()).find((r) => r.id === good && r.status !== "running"), {
      timeout: 120_000,
      what: "the first backup",
    });
    expect(ok.status).toBe("succeeded");

    const doomed = (await api.post(`/api/backups/configs/${cfg.id}/run`)).json.run_id;
    await until(async () => ((await runs()).find((r) => r.id === doomed)?.progress_bytes ?? 0) > 1024 * 1024, {
      timeout: 60_000,
      every: 10,
      what: "the second backup to be writing",
    });
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    expect(files().length).toBe(2);

    server = await startBinary(["--config", config], { env });
    api = new Client(server.url, { bearer: key });
    const after = await until(
      async () => {
        const r = (await runs()).find((x) => x.id === doomed);
        return r?.status === "failed" ? r : null;
      },
      { timeout: 30_000, what: "the interrupted run marked failed" },
    );
    expect(after).toMatchObject({ error: "interrupted: the server stopped", size_bytes: null, sha256: null });
    await until(() => files().length === 1, { timeout: 10_000, what: "the half file removed" });
    const kept = files()[0];
    expect(new Bun.CryptoHasher("sha256").update(new Uint8Array(await Bun.file(kept).arrayBuffer())).digest("hex")).toBe(
      ok.sha256,
    );

    const restore = (await api.post(`/api/backups/runs/${good}/restore`)).json.restore_id;
    await until(async () => (await running()).join() === "false,false", {
      timeout: 60_000,
      every: 10,
      what: "the restore to stop both replicas",
    });
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    expect(await running()).toEqual([false, false]);

    server = await startBinary(["--config", config], { env });
    api = new Client(server.url, { bearer: key });
    const failed = await until(
      async () => {
        const r = ((await api.get(`/api/apps/${SLUG}/backups/restores`)).json as any[]).find((x) => x.id === restore);
        return r?.status === "failed" ? r : null;
      },
      { timeout: 30_000, what: "the interrupted restore marked failed" },
    );
    expect(failed.error).toBe("interrupted: the server stopped");
    await until(async () => (await running()).join() === "true,true", { timeout: 30_000, what: "both replicas started again" });
    await until(async () => (await api.get(`/api/apps/${SLUG}`)).json?.status === "running", {
      timeout: 60_000,
      what: "app running",
    });
    expect((await dockerOk("exec", await container(), "cat", "/data/k")).trim()).toBe("kept");
  }, 300_000);
});
