/**
 * Backups test helpers: an app with a compose version in the database (no files, so the reconciler leaves it alone),
 * fakes of what surrounds the runner and the restorer (a strategy that dumps known bytes or restores into a list,
 * containers whose hooks are scripted), and the database round trips through the API on the real engine.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DbImageKind, ensureDbImage } from "../../scripts/test-db-images";
import type { Ctx } from "../../src/context";
import type { ServiceContainers } from "../../src/modules/backups/containers";
import type { BackupContainer, OpControl, Strategy } from "../../src/modules/backups/types";
import type { BackupStrategy } from "../../src/shared/backups";
import { appActivity, startDockerServer, waitApp } from "./apps";
import { dockerOk, removeProject, uniqueName } from "./docker";
import { until } from "./http";
import { type S3Server, startS3 } from "./s3";
import type { TestServer } from "./server";
import { tempDir } from "./tmp";

/** Create app `slug` whose current version is `compose` (services read from it). */
export function seedApp(ctx: Ctx, slug: string, compose: string): void {
  const now = new Date().toISOString();
  const app = ctx.appRepo.create(slug, now);
  const v = ctx.db.sqlite
    .query(
      "INSERT INTO compose_versions (app_id, version, hash, compose, env_sealed, source, created_by, status, created_at) VALUES (?, 1, ?, ?, ?, 'api', 'test', 'good', ?) RETURNING id",
    )
    .get(app.id, `h-${slug}`, compose, ctx.secrets.seal(""), now) as { id: number };
  ctx.appRepo.update(app.id, { currentVersionId: v.id }, now);
}

/** A compose file with the named services on a tiny image. */
export const composeOf = (...services: string[]) =>
  `services:\n${services.map((s) => `  ${s}:\n    image: busybox:latest\n`).join("")}`;

/** A fake container of a service. */
export const fakeContainer = (service: string): BackupContainer => ({
  id: `id-${service}`,
  name: `sundeck-app-${service}-1`,
  service,
  image: "busybox:latest",
  env: [],
  mounts: [],
});

/** Controls of a fake strategy: what it dumps, a gate that holds dumps and restores, what it restored. */
export interface FakeStrategy extends Strategy {
  /** Chunks the next dumps yield; an Error in the list makes the stream fail there. */
  chunks: Array<Uint8Array | Error>;
  /** While set, dump streams (after `holdAfter` chunks) and restores wait for it. */
  gate: Promise<void> | null;
  holdAfter: number;
  restored: Array<{ container: string; bytes: Uint8Array }>;
}

/** A strategy of id `id` (extension `.bin.gz`) driven by the test. */
export function fakeStrategy(id: Strategy["id"]): FakeStrategy {
  const s: FakeStrategy = {
    id,
    extension: id === "volume" || id === "sqlite" ? ".tar.gz" : ".bin.gz",
    chunks: [new TextEncoder().encode("hello backup\n")],
    gate: null,
    holdAfter: 0,
    restored: [],
    async dump(_c: BackupContainer, ctl: OpControl) {
      const chunks = [...s.chunks];
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        async pull(ctrl) {
          if (s.gate && sent >= s.holdAfter) await s.gate;
          sent++;
          if (ctl.signal?.aborted) return ctrl.error(new Error("aborted"));
          const next = chunks.shift();
          if (next === undefined) ctrl.close();
          else if (next instanceof Error) ctrl.error(next);
          else ctrl.enqueue(next);
        },
      });
    },
    async restore(c: BackupContainer, data: ReadableStream<Uint8Array>) {
      if (s.gate) await s.gate;
      const bytes = new Uint8Array(await new Response(data).arrayBuffer());
      s.restored.push({ container: c.name, bytes });
    },
  };
  return s;
}

/** Fake containers: every service has a running container; hooks answer by script. */
export interface FakeContainers extends ServiceContainers {
  execs: string[];
  stops: string[];
  starts: string[];
  /** Exit code of a hook command (default 0). */
  codeOf: (cmd: string) => number;
}

export function fakeContainers(): FakeContainers {
  const f: FakeContainers = {
    execs: [],
    stops: [],
    starts: [],
    codeOf: () => 0,
    find: async (_slug, service) => fakeContainer(service),
    running: async (_slug, service) => [fakeContainer(service)],
    byName: async (_slug, name) => ({ ...fakeContainer(name.split("-")[2] ?? name), name }),
    exec: async (_c, cmd, signal) => {
      f.execs.push(cmd);
      // "hang" waits until the run gives up on it
      if (cmd === "hang") await new Promise<void>((r) => signal?.addEventListener("abort", () => r(), { once: true }));
      const code = f.codeOf(cmd);
      return { code, output: code ? `${cmd}: failed` : "" };
    },
    stop: async (c) => {
      f.stops.push(c.name);
    },
    start: async (c) => {
      f.starts.push(c.name);
    },
  };
  return f;
}

/** A gate: `hold` closes it (strategies wait), `open` lets them go. */
export function gateOn(s: FakeStrategy): () => void {
  let open!: () => void;
  s.gate = new Promise<void>((r) => {
    open = r;
  });
  return () => {
    s.gate = null;
    open();
  };
}

/** Runs a command in the current container of a service (`docker exec`, with `env` as `-e`); resolves its stdout. */
export type ServiceExec = (cmd: string[], env?: string[]) => Promise<string>;

/**
 * A database app backed up and restored through the API, on the real engine: `cases` are a service and a target kind
 * each. Every case writes its data (`seed`, once per service), backs up (POST run), checks the archive's sha256 and
 * first bytes through the download route, destroys the data, restores the run (POST restore) and reads it back.
 */
export interface DbRoundTrip {
  strategy: BackupStrategy;
  image: DbImageKind;
  /** The compose file of the app, without the top-level `secrets:` (made from `secretFiles`). */
  compose(image: string): string;
  /** Compose secrets (a file each, in a directory the server allows) by name: their content. */
  secretFiles?: Record<string, string>;
  cases: Array<{ service: string; target: "local" | "s3"; what?: string }>;
  /** False when the compose file cannot say the strategy (a label of the image): `detected` is not checked. */
  detected?: boolean;
  /** Throws until the database of the service answers. */
  ready(exec: ServiceExec, service: string): Promise<unknown>;
  seed(exec: ServiceExec, service: string): Promise<unknown>;
  destroy(exec: ServiceExec, service: string): Promise<unknown>;
  /** What the data reads as: `expected` once restored, something else once destroyed. */
  read(exec: ServiceExec, service: string): Promise<string>;
  expected: string;
  /** What the dump (the archive gunzipped) starts with. */
  head: RegExp;
}

/** What a file can add its own tests with: the app, its server, a service's exec. */
export interface DbRoundTripApp {
  slug: string;
  server(): TestServer;
  exec(service: string): ServiceExec;
}

/**
 * Register the round trips of `spec` (its own server, S3 server and app; removed after the file). With secret files,
 * a last test checks their content is nowhere in the server's log, the runs, the restores or the activity.
 */
export function describeDbRoundTrip(spec: DbRoundTrip): DbRoundTripApp {
  const slug = uniqueName(`sdt-${spec.strategy.slice(0, 5)}bk`);
  const project = `sundeck-${slug}`;
  let s: TestServer;
  let s3: S3Server;
  const containerOf = (service: string) => serviceContainer(project, service, { running: true });
  const execIn =
    (service: string): ServiceExec =>
    async (cmd, env = []) =>
      dockerOk("exec", ...env.flatMap((e) => ["-e", e]), await containerOf(service), ...cmd);
  const ready = (service: string) =>
    until(
      async () => {
        await spec.ready(execIn(service), service);
        return true;
      },
      { timeout: 60_000, every: 200, what: `${service} ready` },
    );

  beforeAll(async () => {
    const image = await ensureDbImage(spec.image);
    await removeProject(project, { volumes: true });
    const secrets = tempDir("sundeck-secrets-");
    for (const [name, text] of Object.entries(spec.secretFiles ?? {})) {
      writeFileSync(join(secrets, name), text);
      chmodSync(join(secrets, name), 0o644);
    }
    s3 = await startS3("backups");
    s = await startDockerServer({ compose: { allowed_host_paths: [secrets] } });
    const names = Object.keys(spec.secretFiles ?? {});
    const compose = `${spec.compose(image)}${names.length ? "secrets:\n" : ""}${names.map((n) => `  ${n}:\n    file: ${join(secrets, n)}\n`).join("")}`;
    const deploy = await s.root.post("/api/apps/deploy", { slug, compose });
    expect(deploy.status).toBe(202);
    await waitApp(s.root, slug, (a) => a.status === "running", 120_000);
    const services = [...new Set(spec.cases.map((c) => c.service))];
    for (const service of services) {
      await ready(service);
      await spec.seed(execIn(service), service);
    }
  }, 240_000);
  afterAll(async () => {
    await s?.stop();
    await s3?.stop();
    await removeProject(project, { volumes: true });
  }, 60_000);

  describe(`a ${spec.strategy} backup and restore through the API`, () => {
    for (const { service, target: kind, what } of spec.cases) {
      it(`backs up ${service}${what ? ` (${what})` : ""} to ${kind}, and brings the destroyed data back`, async () => {
        const exec = execIn(service);
        if (spec.detected !== false) {
          expect((await s.root.get(`/api/apps/${slug}/backups/detected`)).json).toContainEqual(
            expect.objectContaining({ service, strategy: spec.strategy }),
          );
        }
        const target = kind === "local" ? { kind } : { kind, ...s3Target(s3) };
        const c = await s.root.post(`/api/apps/${slug}/backups/configs`, { strategy: spec.strategy, service, target });
        expect(c.status).toBe(201);
        const r = await s.root.post(`/api/backups/configs/${c.json.id}/run`);
        expect(r.status).toBe(202);
        await s.ctx.backups.waitRun(c.json.id);
        const run = (await s.root.get(`/api/apps/${slug}/backups/runs`)).json.find((x: any) => x.id === r.json.run_id);
        expect(run).toMatchObject({ status: "succeeded", target_kind: kind, error: null });

        const bytes = await downloadRun(s, run.id, kind);
        expect(new Bun.CryptoHasher("sha256").update(bytes).digest("hex")).toBe(run.sha256);
        expect(new TextDecoder().decode(Bun.gunzipSync(bytes).subarray(0, 200))).toMatch(spec.head);

        await spec.destroy(exec, service);
        expect(await spec.read(exec, service).catch((e) => String(e))).not.toBe(spec.expected);
        const rs = await s.root.post(`/api/backups/runs/${run.id}/restore`);
        expect(rs.status).toBe(202);
        expect(await restoreDone(s, slug, rs.json.restore_id)).toMatchObject({ status: "succeeded", error: null });
        await ready(service);
        expect(await spec.read(exec, service)).toBe(spec.expected);
      }, 120_000);
    }
    const secrets = Object.values(spec.secretFiles ?? {}).map((t) => t.trim());
    if (secrets.length) {
      it("keeps the secret files' content out of the log, the runs, the restores and the activity", async () => {
        const seen = [
          s.ctx.logs.snapshot().join("\n"),
          (await s.root.get(`/api/apps/${slug}/backups/runs`)).text,
          (await s.root.get(`/api/apps/${slug}/backups/restores`)).text,
          JSON.stringify(await appActivity(s.root, slug)),
        ].join("\n");
        expect(seen).toContain(spec.strategy);
        // counted, not matched: a failure must not print what it found
        for (const secret of secrets) expect(seen.split(secret).length - 1).toBe(0);
      });
    }
  });
  return { slug, server: () => s, exec: execIn };
}

/** The id of compose project `project`'s container of `service` (`running`: only a running one). */
export const serviceContainer = async (project: string, service: string, o: { running?: boolean } = {}) =>
  (
    await dockerOk(
      "ps",
      o.running ? "-q" : "-aq",
      "--filter",
      `label=com.docker.compose.project=${project}`,
      "--filter",
      `label=com.docker.compose.service=${service}`,
    )
  ).trim();

/** Create a config of app `slug` from `body`, run it now and wait for the run; returns the config's id and the run. */
export async function backUpNow(
  s: TestServer,
  slug: string,
  body: Record<string, unknown>,
): Promise<{ configId: number; run: any }> {
  const c = await s.root.post(`/api/apps/${slug}/backups/configs`, body);
  expect(c.status).toBe(201);
  const r = await s.root.post(`/api/backups/configs/${c.json.id}/run`);
  expect(r.status).toBe(202);
  await s.ctx.backups.waitRun(c.json.id);
  const run = (await s.root.get(`/api/apps/${slug}/backups/runs`)).json.find((x: any) => x.id === r.json.run_id);
  return { configId: c.json.id, run };
}

/** The S3 part of a backup target on `s3`. */
export const s3Target = (s3: S3Server) => ({
  endpoint: s3.endpoint,
  bucket: s3.bucket,
  prefix: "sd/",
  region: "",
  access_key: s3.accessKey,
  secret_key: s3.secretKey,
});

/** The bytes of a run's archive through the download route (S3: the presigned URL it redirects to). */
export async function downloadRun(s: TestServer, runId: number, kind: "local" | "s3"): Promise<Uint8Array<ArrayBuffer>> {
  const d = await fetch(`${s.url}/api/backups/runs/${runId}/download`, {
    headers: { authorization: `Bearer ${s.keyFor("root").key}` },
    redirect: "manual",
  });
  expect(d.status).toBe(kind === "s3" ? 302 : 200);
  const body = kind === "s3" ? await fetch(d.headers.get("location")!) : d;
  return new Uint8Array(await body.arrayBuffer());
}

/** The restore `id` of app `slug` once it is no longer running. */
export const restoreDone = (s: TestServer, slug: string, id: number) =>
  until(
    async () => {
      const r = (await s.root.get(`/api/apps/${slug}/backups/restores`)).json.find((x: any) => x.id === id);
      return r && r.status !== "running" ? r : null;
    },
    { timeout: 60_000, what: `restore ${id}` },
  );
