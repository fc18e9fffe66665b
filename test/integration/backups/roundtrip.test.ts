/**
 * Backups end to end on the real engine, through the API: a busybox app writes files into a named volume, a config
 * backs it up to the local target (a pre hook really runs in the container), the files are deleted, the run is
 * restored (the service stopped and started around it) and the files read back; then the downloaded archive is
 * restored by upload, and a hostile upload is refused with the volume untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { dockerOk, removeProject, uniqueName } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";
import { gzip, member, tar } from "../../helpers/tar-corpus";

const SLUG = uniqueName("sdt-backup");
const compose = `services:
  files:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    volumes:
      - store:/data
    stop_grace_period: 1s
volumes:
  store: {}
`;

let s: TestServer;
let container: string;

const sh = (cmd: string) => dockerOk("exec", container, "sh", "-c", cmd);
const containerName = async () =>
  (
    await dockerOk(
      "ps",
      "-q",
      "--filter",
      `label=com.docker.compose.project=sundeck-${SLUG}`,
      "--filter",
      "label=com.docker.compose.service=files",
    )
  ).trim();
const restoreDone = (id: number) =>
  until(
    async () => {
      const r = (await s.root.get(`/api/apps/${SLUG}/backups/restores`)).json.find((x: any) => x.id === id);
      return r && r.status !== "running" ? r : null;
    },
    { timeout: 60_000, what: `restore ${id}` },
  );

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer();
  expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running");
  container = await containerName();
}, 120_000);
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
}, 60_000);

describe("a volume backup and restore on the real engine", () => {
  let runId: number;

  it("detects the volume and backs it up to the local target, running the pre hook in the container", async () => {
    expect((await s.root.get(`/api/apps/${SLUG}/backups/detected`)).json).toContainEqual(
      expect.objectContaining({ service: "files", strategy: "volume" }),
    );
    await sh("mkdir -p /data/sub && echo alpha > /data/a.txt && echo beta > /data/sub/b.txt");
    const c = await s.root.post(`/api/apps/${SLUG}/backups/configs`, {
      strategy: "volume",
      service: "files",
      target: { kind: "local" },
      pre_hooks: ["date > /data/pre-hook-ran"],
      post_hooks: ["rm -f /data/pre-hook-ran"],
    });
    expect(c.status).toBe(201);
    const r = await s.root.post(`/api/backups/configs/${c.json.id}/run`);
    expect(r.status).toBe(202);
    runId = r.json.run_id;
    await s.ctx.backups.waitRun(c.json.id);
    const run = (await s.root.get(`/api/apps/${SLUG}/backups/runs`)).json.find((x: any) => x.id === runId);
    expect(run).toMatchObject({ status: "succeeded", strategy: "volume", service: "files", error: null });
    expect(run.size_bytes).toBeGreaterThan(0);
    // the post hook removed what the pre hook wrote: both ran in the container
    expect(await sh("ls /data")).not.toContain("pre-hook-ran");
  }, 60_000);

  it("restores the run after the files are deleted, and the service runs again", async () => {
    await sh("rm -rf /data/a.txt /data/sub");
    const r = await s.root.post(`/api/backups/runs/${runId}/restore`);
    expect(r.status).toBe(202);
    const done = await restoreDone(r.json.restore_id);
    expect(done).toMatchObject({ status: "succeeded", error: null, run_id: runId });
    await waitApp(s.root, SLUG, (a) => a.status === "running");
    container = await containerName();
    expect((await sh("cat /data/a.txt /data/sub/b.txt")).trim()).toBe("alpha\nbeta");
    expect(await sh("ls /data")).toContain("pre-hook-ran");
  }, 90_000);

  it("restores into a stopped app without starting it: the files are there once the app is started", async () => {
    await sh("rm -rf /data/a.txt /data/sub");
    expect((await s.root.post(`/api/apps/${SLUG}/stop`)).status).toBe(202);
    await waitApp(s.root, SLUG, (a) => a.status === "stopped");
    const r = await s.root.post(`/api/backups/runs/${runId}/restore`);
    expect(r.status).toBe(202);
    expect(await restoreDone(r.json.restore_id)).toMatchObject({ status: "succeeded", error: null });
    expect((await dockerOk("inspect", "-f", "{{.State.Running}}", container)).trim()).toBe("false");
    expect((await s.root.post(`/api/apps/${SLUG}/start`)).status).toBe(202);
    await waitApp(s.root, SLUG, (a) => a.status === "running");
    container = await containerName();
    expect((await sh("cat /data/a.txt /data/sub/b.txt")).trim()).toBe("alpha\nbeta");
  }, 90_000);

  it("restores the downloaded archive by upload, and refuses a hostile one with the volume untouched", async () => {
    const d = await fetch(`${s.url}/api/backups/runs/${runId}/download`, {
      headers: { authorization: `Bearer ${s.keyFor("root").key}` },
    });
    expect(d.status).toBe(200);
    const archive = new Uint8Array(await d.arrayBuffer());
    await sh("rm -rf /data/a.txt /data/sub /data/pre-hook-ran && echo later > /data/c.txt");

    const hostile = new FormData();
    hostile.set("file", new Blob([gzip(tar(member({ name: "data/../../etc/evil" }, "x"))) as BlobPart]), "evil.tar.gz");
    hostile.set("strategy", "volume");
    const bad = await s.root.post(`/api/apps/${SLUG}/backups/upload-restore`, hostile);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("data/../../etc/evil");
    expect((await sh("ls /data")).split("\n").sort()).toEqual(["c.txt"]);

    const form = new FormData();
    form.set("file", new Blob([archive as BlobPart]), "backup.tar.gz");
    form.set("strategy", "volume");
    form.set("container", container);
    const r = await s.root.post(`/api/apps/${SLUG}/backups/upload-restore`, form);
    expect(r.status).toBe(202);
    expect(await restoreDone(r.json.restore_id)).toMatchObject({ status: "succeeded", run_id: null });
    await waitApp(s.root, SLUG, (a) => a.status === "running");
    container = await containerName();
    expect((await sh("cat /data/a.txt /data/sub/b.txt /data/c.txt")).trim()).toBe("alpha\nbeta\nlater");
  }, 90_000);
});
