/**
 * An S3 run keeps the (sealed) secret it wrote with: after its config is pointed elsewhere or removed, its archive is
 * still downloadable (302 to a presigned URL that works) and restorable. Real server, real s3rver; the strategy and
 * the containers are fakes. The secret is never on the wire.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { composeOf, fakeContainers, fakeStrategy, seedApp } from "../../helpers/backups";
import type { Client } from "../../helpers/http";
import { type S3Server, startS3 } from "../../helpers/s3";
import { startTestServer, type TestServer } from "../../helpers/server";

let s: TestServer;
let s3: S3Server;
let manager: Client;
const postgres = fakeStrategy("postgres");
postgres.chunks = [new TextEncoder().encode("rows of the shop\n")];

beforeAll(async () => {
  s3 = await startS3("backups");
  s = await startTestServer(
    {},
    { backups: { strategy: (id) => (id === "postgres" ? postgres : null), containers: fakeContainers() } },
  );
  seedApp(s.ctx, "shop", composeOf("db"));
  manager = await s.user("max", "manage", ["shop"]);
}, 30_000);
afterAll(async () => {
  await s?.stop();
  await s3?.stop();
});

const config = (bucket: string) => ({
  strategy: "postgres",
  service: "db",
  target: {
    kind: "s3",
    endpoint: s3.endpoint,
    bucket,
    prefix: "sundeck/",
    region: "",
    access_key: s3.accessKey,
    secret_key: "the-run-keeps-me",
  },
  schedule: null,
  retention_count: null,
  retention_days: null,
  pre_hooks: [],
  post_hooks: [],
  enabled: true,
});

async function downloaded(runId: number): Promise<string> {
  const d = await fetch(`${s.url}/api/backups/runs/${runId}/download`, {
    headers: { authorization: `Bearer ${s.keyFor("max").key}` },
    redirect: "manual",
  });
  expect(d.status).toBe(302);
  const body = await fetch(d.headers.get("location")!);
  expect(body.status).toBe(200);
  return new Response(new Blob([await body.arrayBuffer()]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
}

describe("an s3 run outlives its config", () => {
  it("downloads and restores after the config moved to another bucket, and after it was removed", async () => {
    // a new S3 endpoint is an admin's choice; the manage user works with the config after
    const c = await s.root.post("/api/apps/shop/backups/configs", config(s3.bucket));
    expect(c.status).toBe(201);
    const r = await manager.post(`/api/backups/configs/${c.json.id}/run`);
    expect(r.status).toBe(202);
    await s.ctx.backups.waitRun(c.json.id);
    const runId = r.json.run_id;
    const runs = (await manager.get("/api/apps/shop/backups/runs")).json;
    expect(runs[0]).toMatchObject({ id: runId, status: "succeeded" });
    expect(JSON.stringify(runs)).not.toContain("the-run-keeps-me");

    // the config now writes elsewhere, with another secret: the run still reads where it wrote
    const moved = await manager.put(`/api/backups/configs/${c.json.id}`, {
      target: { ...config("elsewhere").target, secret_key: "another-secret" },
    });
    expect(moved.status).toBe(200);
    expect(await downloaded(runId)).toBe("rows of the shop\n");

    expect((await manager.del(`/api/backups/configs/${c.json.id}`)).status).toBe(204);
    expect(await downloaded(runId)).toBe("rows of the shop\n");
    const restore = await manager.post(`/api/backups/runs/${runId}/restore`);
    expect(restore.status).toBe(202);
    await s.ctx.backups.waitRestore(restore.json.restore_id);
    const restores = (await manager.get("/api/apps/shop/backups/restores")).json;
    expect(restores[0]).toMatchObject({ id: restore.json.restore_id, run_id: runId, status: "succeeded", error: null });
    expect(new TextDecoder().decode(postgres.restored.at(-1)!.bytes)).toBe("rows of the shop\n");
    // sealed at rest, not in clear
    const row = s.ctx.db.sqlite.query("SELECT secret_enc FROM backup_runs WHERE id = ?").get(runId) as { secret_enc: string };
    expect(row.secret_enc).toBeTruthy();
    expect(row.secret_enc).not.toContain("the-run-keeps-me");
  }, 60_000);
});
