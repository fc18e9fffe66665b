/**
 * A Postgres app (a locally built image) backed up through the API to an S3 server (s3rver) and to local disk: rows
 * written, backed up, the table dropped, each run restored, the rows read back. The S3 download is a redirect to a
 * presigned URL whose bytes match the recorded sha256.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ensureDbImage } from "../../../scripts/test-db-images";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { dockerOk, removeProject, uniqueName } from "../../helpers/docker";
import { until } from "../../helpers/http";
import { type S3Server, startS3 } from "../../helpers/s3";
import type { TestServer } from "../../helpers/server";

const SLUG = uniqueName("sdt-pgbk");
let s: TestServer;
let s3: S3Server;
let container: string;

const psql = (sql: string) => dockerOk("exec", container, "psql", "-U", "sd", "-d", "app", "-tAc", sql);
const restoreDone = (id: number) =>
  until(
    async () => {
      const r = (await s.root.get(`/api/apps/${SLUG}/backups/restores`)).json.find((x: any) => x.id === id);
      return r && r.status !== "running" ? r : null;
    },
    { timeout: 60_000, what: `restore ${id}` },
  );

beforeAll(async () => {
  const image = await ensureDbImage("postgres");
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s3 = await startS3("backups");
  s = await startDockerServer();
  const compose = `services:
  db:
    image: ${image}
    environment:
      POSTGRES_USER: sd
      POSTGRES_PASSWORD: s3cret
      POSTGRES_DB: app
    stop_grace_period: 2s
`;
  expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running", 120_000);
  container = (await dockerOk("ps", "-q", "--filter", `label=com.docker.compose.project=sundeck-${SLUG}`)).trim();
  await until(
    async () => {
      await psql("select 1");
      return true;
    },
    { timeout: 60_000, every: 200, what: "postgres ready" },
  );
  await psql(
    "create table items(id int primary key, name text); insert into items select g, 'item ' || g from generate_series(1, 2000) g",
  );
}, 240_000);
afterAll(async () => {
  await s?.stop();
  await s3?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
}, 60_000);

describe("a postgres backup and restore through the API", () => {
  for (const kind of ["s3", "local"] as const) {
    it(`backs up to ${kind}, and brings the dropped rows back`, async () => {
      expect((await s.root.get(`/api/apps/${SLUG}/backups/detected`)).json).toContainEqual(
        expect.objectContaining({ service: "db", strategy: "postgres" }),
      );
      const target =
        kind === "local"
          ? { kind: "local" }
          : {
              kind: "s3",
              endpoint: s3.endpoint,
              bucket: s3.bucket,
              prefix: "sd/",
              region: "",
              access_key: s3.accessKey,
              secret_key: s3.secretKey,
            };
      const c = await s.root.post(`/api/apps/${SLUG}/backups/configs`, { strategy: "postgres", service: "db", target });
      expect(c.status).toBe(201);
      const r = await s.root.post(`/api/backups/configs/${c.json.id}/run`);
      expect(r.status).toBe(202);
      await s.ctx.backups.waitRun(c.json.id);
      const run = (await s.root.get(`/api/apps/${SLUG}/backups/runs`)).json.find((x: any) => x.id === r.json.run_id);
      expect(run).toMatchObject({ status: "succeeded", target_kind: kind, error: null });

      const d = await fetch(`${s.url}/api/backups/runs/${run.id}/download`, {
        headers: { authorization: `Bearer ${s.keyFor("root").key}` },
        redirect: "manual",
      });
      expect(d.status).toBe(kind === "s3" ? 302 : 200);
      const body = kind === "s3" ? await fetch(d.headers.get("location")!) : d;
      const bytes = new Uint8Array(await body.arrayBuffer());
      expect(new Bun.CryptoHasher("sha256").update(bytes).digest("hex")).toBe(run.sha256);
      expect(new TextDecoder().decode(Bun.gunzipSync(bytes).subarray(0, 5))).toBe("PGDMP");

      await psql("drop table items");
      const rs = await s.root.post(`/api/backups/runs/${run.id}/restore`);
      expect(rs.status).toBe(202);
      expect(await restoreDone(rs.json.restore_id)).toMatchObject({ status: "succeeded", error: null });
      expect((await psql("select count(*), max(name) from items")).trim()).toBe("2000|item 999");
    }, 120_000);
  }
});
