/**
 * A stored archive that changed since its backup is not restored, on the real engine through the API: a volume (a
 * tar, checked in the vetting pass) and a Redis dump (not a tar, checked in a pass of its own), each stored once on
 * the local target (the file rewritten) and once on an S3 server (s3rver; the object overwritten). Each restore fails
 * naming the sha256 it expected, with the service never stopped and its data as it was; the volume's original bytes
 * put back restore again.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureDbImage } from "../../../scripts/test-db-images";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { dockerOk, removeProject, requireDocker, uniqueName } from "../../helpers/docker";
import { until } from "../../helpers/http";
import { type S3Server, startS3 } from "../../helpers/s3";
import type { TestServer } from "../../helpers/server";

const SLUG = uniqueName("sdt-verify");
let s: TestServer;
let s3: S3Server;

/** The running container of a service of the app. */
const idOf = async (service: string) => {
  const list = await (await requireDocker()).containers({ project: `sundeck-${SLUG}` });
  const c = list.find((x) => x.service === service && x.state === "running");
  if (!c) throw new Error(`no running container of ${service}`);
  return c.id;
};
const startedAt = async (service: string) =>
  (await dockerOk("inspect", "-f", "{{.State.StartedAt}}", await idOf(service))).trim();
const files = async (cmd: string) => dockerOk("exec", await idOf("files"), "sh", "-c", cmd);
const redis = async (...args: string[]) => (await dockerOk("exec", await idOf("cache"), "redis-cli", ...args)).trim();

const targetOf = (kind: "local" | "s3") =>
  kind === "local"
    ? { kind: "local" }
    : {
        kind: "s3",
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        prefix: "verify/",
        region: "",
        access_key: s3.accessKey,
        secret_key: s3.secretKey,
      };

/** Back up `service` with `strategy` to `kind`; returns the succeeded run. */
async function backup(strategy: string, service: string, kind: "local" | "s3") {
  const c = await s.root.post(`/api/apps/${SLUG}/backups/configs`, { strategy, service, target: targetOf(kind) });
  expect(c.status).toBe(201);
  const r = await s.root.post(`/api/backups/configs/${c.json.id}/run`);
  expect(r.status).toBe(202);
  await s.ctx.backups.waitRun(c.json.id);
  const run = s.ctx.backups.runRow(r.json.run_id);
  expect(run).toMatchObject({ status: "succeeded", error: null });
  return run;
}

/** The same archive with other content of the same length: a valid one a restore would take, only its hash tells. */
function tamper(archive: Uint8Array, from: string, to: string): Uint8Array {
  const plain = Bun.gunzipSync(new Uint8Array(archive));
  const at = Buffer.from(plain).indexOf(from);
  expect(at).toBeGreaterThan(0);
  expect(to.length).toBe(from.length);
  plain.set(new TextEncoder().encode(to), at);
  return Bun.gzipSync(plain);
}

/** The stored bytes of a run, and a way to replace them (the local file, or the S3 object written anew). */
function stored(run: { location: string | null; targetKind: string }) {
  if (run.targetKind === "local") {
    const path = join(s.ctx.config.data_dir, "backups", run.location!);
    return { read: async () => new Uint8Array(readFileSync(path)), write: async (b: Uint8Array) => writeFileSync(path, b) };
  }
  const client = new Bun.S3Client({
    endpoint: s3.endpoint,
    bucket: s3.bucket,
    accessKeyId: s3.accessKey,
    secretAccessKey: s3.secretKey,
    region: "us-east-1",
  });
  const file = client.file(`verify/${run.location}`);
  return {
    read: async () => new Uint8Array(await file.arrayBuffer()),
    // s3rver can answer a PUT that replaces an object before a read sees the new bytes: wait until one does
    write: async (b: Uint8Array) => {
      await file.write(b);
      await until(async () => Buffer.from(await file.arrayBuffer()).equals(Buffer.from(b)), {
        timeout: 5_000,
        what: "the object to hold the written bytes",
      });
    },
  };
}

async function restore(runId: number) {
  const r = await s.root.post(`/api/backups/runs/${runId}/restore`);
  expect(r.status).toBe(202);
  await s.ctx.backups.waitRestore(r.json.restore_id);
  return (await s.root.get(`/api/apps/${SLUG}/backups/restores`)).json.find((x: any) => x.id === r.json.restore_id);
}

beforeAll(async () => {
  const image = await ensureDbImage("redis");
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s3 = await startS3("backups");
  s = await startDockerServer();
  // files stops at once; slow ignores SIGTERM, so its stop takes its whole grace period
  const busybox = (name: string, volume: string, onTerm: string, graceS: number) => `  ${name}:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap '${onTerm}' TERM; while true; do sleep 1; done"]
    volumes: ["${volume}:/data"]
    stop_grace_period: ${graceS}s
`;
  const compose = `services:
${busybox("files", "store", "exit 0", 1)}${busybox("slow", "slow", "", 3)}  cache:
    image: ${image}
    stop_grace_period: 2s
volumes:
  store: {}
  slow: {}
`;
  expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running", 120_000);
  await until(async () => (await redis("ping")) === "PONG", { timeout: 30_000, every: 200, what: "redis ready" });
}, 240_000);
afterAll(async () => {
  await s?.stop();
  await s3?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
}, 60_000);

describe("a restore of a stored archive that changed since its backup", () => {
  for (const kind of ["local", "s3"] as const) {
    it(`(volume, ${kind}) fails before the service is stopped, the volume untouched; the original bytes restore`, async () => {
      await files("echo backed-up > /data/a.txt");
      const run = await backup("volume", "files", kind);
      const store = stored(run);
      const original = await store.read();
      expect(new Bun.CryptoHasher("sha256").update(original).digest("hex")).toBe(run.sha256!);
      await store.write(tamper(original, "backed-up\n", "tampered!\n"));
      await files("echo changed-since > /data/a.txt");
      const before = await startedAt("files");

      const r = await restore(run.id);
      expect(r.status).toBe("failed");
      expect(r.error).toStartWith(`archive changed since the backup: sha256 `);
      expect(r.error).toContain(`expected ${run.sha256!.slice(0, 12)}`);
      expect(await startedAt("files")).toBe(before);
      expect((await files("cat /data/a.txt")).trim()).toBe("changed-since");

      await store.write(original);
      expect(await restore(run.id)).toMatchObject({ status: "succeeded", error: null });
      await waitApp(s.root, SLUG, (a) => a.status === "running");
      expect((await files("cat /data/a.txt")).trim()).toBe("backed-up");
    }, 120_000);

    it(`(redis dump, ${kind}) fails before the service is stopped or a byte is written, the data as it was; the original bytes restore`, async () => {
      await redis("SET", "k", "backed-up");
      const run = await backup("redis", "cache", kind);
      const store = stored(run);
      const original = await store.read();
      // one byte of the compressed dump flipped, the size kept
      const tampered = original.slice();
      tampered[Math.floor(tampered.length / 2)] ^= 0xff;
      await store.write(tampered);
      await redis("SET", "k", "changed-since");
      const before = await startedAt("cache");

      const r = await restore(run.id);
      expect(r.status).toBe("failed");
      expect(r.error).toMatch(/^archive changed since the backup: sha256 [0-9a-f]{12}… expected [0-9a-f]{12}…$/);
      expect(r.error).toContain(`expected ${run.sha256!.slice(0, 12)}`);
      expect(await startedAt("cache")).toBe(before);
      expect(await redis("GET", "k")).toBe("changed-since");

      await store.write(original);
      expect(await restore(run.id)).toMatchObject({ status: "succeeded", error: null });
      await waitApp(s.root, SLUG, (a) => a.status === "running");
      await until(async () => (await redis("GET", "k")) === "backed-up", { timeout: 30_000, what: "the dump restored" });
    }, 120_000);
  }
});

describe("a restore of a stored archive that changes after it was checked", () => {
  it("fails saying so, and the service it stopped runs again", async () => {
    await dockerOk("exec", await idOf("slow"), "sh", "-c", "echo backed-up > /data/a.txt");
    const run = await backup("volume", "slow", "local");
    const store = stored(run);
    const original = await store.read();
    const id = await idOf("slow");
    // the stop signal is the sign the check passed: the archive is rewritten while the service takes its 3 s to stop,
    // before the restore reads it again
    const watch = new AbortController();
    const engine = await requireDocker();
    const since = Date.now() / 1000;
    const rewritten = (async () => {
      for await (const e of engine.events({ filters: { container: [id], event: ["kill"] }, since, signal: watch.signal })) {
        if (e.attributes.signal !== "15") continue;
        await store.write(tamper(original, "backed-up\n", "tampered!\n"));
        return true;
      }
      return false;
    })();
    const r = await restore(run.id).finally(() => watch.abort());
    expect(await rewritten).toBe(true);
    expect(r.status).toBe("failed");
    expect(r.error).toStartWith("archive changed while it was restored (it matched its backup when checked");
    expect(r.error).toContain(`expected ${run.sha256!.slice(0, 12)}`);
    await waitApp(s.root, SLUG, (a) => a.status === "running");
    expect(await idOf("slow")).toBe(id);
  }, 120_000);
});
