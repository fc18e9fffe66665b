/**
 * Backup routes on a real server with a real SQLite: who may read and change configs (anonymous, viewer, manage with
 * and without a grant, admin), the 400s of bad configs, the S3 secret sealed and write-only, activity entries with
 * before and after and no secret, runs and downloads, upload-restore's 32 MiB limit and its refusal of a hostile
 * archive (400 naming the entry, nothing restored, no temp left), and the 429 with Retry-After past 4 restores.
 * The strategy and the containers are fakes: the routes and the service are what runs for real.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { composeOf, fakeContainers, fakeStrategy, seedApp } from "../../../helpers/backups";
import { type Client, until } from "../../../helpers/http";
import { startTestServer, type TestServer } from "../../../helpers/server";
import { gzip, member, tar } from "../../../helpers/tar-corpus";

let s: TestServer;
let viewer: Client;
let manager: Client;
let outsider: Client;
const volume = fakeStrategy("volume");
const postgres = fakeStrategy("postgres");
const containers = fakeContainers();
// a volume upload's layout is judged against the container's mounts: the app's containers have one at /data
const named = containers.byName;
containers.byName = async (slug, name) => ({
  ...(await named(slug, name)),
  mounts: [{ type: "volume", name: "data", source: "/var/lib/docker/volumes/data/_data", destination: "/data" }],
});

const local = (over: Record<string, unknown> = {}) => ({
  strategy: "postgres",
  service: "db",
  target: { kind: "local" },
  schedule: "0 3 * * *",
  timezone: "Europe/Paris",
  retention_count: 7,
  retention_days: null,
  pre_hooks: ["echo pre"],
  post_hooks: [],
  enabled: true,
  ...over,
});
const s3 = (secret?: string) => ({
  kind: "s3",
  endpoint: "http://127.0.0.1:9000",
  bucket: "backups",
  prefix: "sundeck/",
  region: "",
  access_key: "AKIA123",
  ...(secret === undefined ? {} : { secret_key: secret }),
});

beforeAll(async () => {
  s = await startTestServer(
    {},
    { backups: { strategy: (id) => (id === "volume" ? volume : id === "postgres" ? postgres : null), containers } },
  );
  seedApp(s.ctx, "web", composeOf("app", "db"));
  seedApp(s.ctx, "shop", composeOf("db"));
  viewer = await s.user("vera", "viewer", ["web"]);
  manager = await s.user("max", "manage", ["web"]);
  outsider = await s.user("otto", "manage", ["shop"]);
}, 30_000);
afterAll(() => s.stop());

describe("configs: who may do what", () => {
  it("answers 401 to anonymous callers on every route", async () => {
    for (const [m, p] of [
      ["GET", "/api/apps/web/backups/configs"],
      ["POST", "/api/apps/web/backups/configs"],
      ["PUT", "/api/backups/configs/1"],
      ["DELETE", "/api/backups/configs/1"],
      ["POST", "/api/backups/configs/1/run"],
      ["GET", "/api/apps/web/backups/runs"],
      ["GET", "/api/backups/runs/1/download"],
      ["POST", "/api/backups/runs/1/restore"],
      ["POST", "/api/apps/web/backups/upload-restore"],
      ["GET", "/api/apps/web/backups/restores"],
      ["GET", "/api/apps/web/backups/detected"],
    ] as const) {
      expect({ m, p, status: (await s.anon.request(m, p, m === "GET" ? undefined : {})).status }).toEqual({ m, p, status: 401 });
    }
  });

  it("lets a manager with a grant create a config, a viewer read it only, and hides it from others", async () => {
    const r = await manager.post("/api/apps/web/backups/configs", local());
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(Number),
      app_slug: "web",
      strategy: "postgres",
      service: "db",
      target: { kind: "local" },
      schedule: "0 3 * * *",
      timezone: "Europe/Paris",
      retention_count: 7,
      retention_days: null,
      pre_hooks: ["echo pre"],
      post_hooks: [],
      enabled: true,
      next_run_at: expect.stringMatching(/T0[12]:00:00\.000Z$/),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const id = r.json.id;
    expect((await viewer.get("/api/apps/web/backups/configs")).json).toHaveLength(1);
    expect((await viewer.post("/api/apps/web/backups/configs", local())).status).toBe(403);
    expect((await viewer.put(`/api/backups/configs/${id}`, { enabled: false })).status).toBe(403);
    expect((await viewer.del(`/api/backups/configs/${id}`)).status).toBe(403);
    expect((await viewer.post(`/api/backups/configs/${id}/run`)).status).toBe(403);
    expect((await outsider.get("/api/apps/web/backups/configs")).status).toBe(404);
    expect((await outsider.put(`/api/backups/configs/${id}`, { enabled: false })).status).toBe(404);
    expect((await outsider.del(`/api/backups/configs/${id}`)).status).toBe(404);
    expect((await s.root.get("/api/apps/nope/backups/configs")).status).toBe(404);
    const put = await manager.put(`/api/backups/configs/${id}`, { enabled: false, schedule: null });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ enabled: false, schedule: null, next_run_at: null, retention_count: 7 });
    expect((await manager.del(`/api/backups/configs/${id}`)).status).toBe(204);
    expect((await manager.del(`/api/backups/configs/${id}`)).status).toBe(404);
  });
});

describe("configs: validation", () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ["an unknown strategy", local({ strategy: "oracle" }), /strategy must be one of/],
    ["a service the app does not have", local({ service: "cache" }), /service: the app has no service cache/],
    ["a malformed cron expression", local({ schedule: "every day" }), /schedule/],
    ["a cron field out of range", local({ schedule: "61 * * * *" }), /schedule/],
    ["an unknown time zone", local({ timezone: "Mars/Olympus" }), /timezone: Mars\/Olympus is not an IANA time zone/],
    ["a zero retention count", local({ retention_count: 0 }), /retention_count/],
    ["a negative retention age", local({ retention_days: -1 }), /retention_days/],
    ["too many hooks", local({ pre_hooks: Array(11).fill("true") }), /pre_hooks must be at most 10/],
    ["an empty hook", local({ post_hooks: ["  "] }), /post_hooks must not hold empty commands/],
    ["an unknown target kind", local({ target: { kind: "ftp" } }), /target/],
    ["an s3 target without a secret", local({ target: s3() }), /secret_key is required/],
    ["an s3 endpoint that is no URL", local({ target: { ...s3("x"), endpoint: "nope" } }), /endpoint/],
    ["an s3 bucket S3 refuses", local({ target: { ...s3("x"), bucket: "A_B" } }), /bucket/],
    ["a missing strategy", { service: "db", target: { kind: "local" } }, /strategy is required/],
  ];
  for (const [what, body, reason] of cases) {
    it(`refuses ${what} with 400 and the reason`, async () => {
      const r = await manager.post("/api/apps/web/backups/configs", body);
      expect(r.status).toBe(400);
      expect(r.text).toMatch(reason);
    });
  }
});

describe("configs: the s3 secret", () => {
  it("seals it, never returns it, keeps it on omission or the mask, and keeps it out of activity", async () => {
    const r = await s.root.post("/api/apps/web/backups/configs", local({ target: s3("s3cr3t-value") }));
    expect(r.status).toBe(201);
    expect(r.json.target).toEqual({ ...s3("********"), region: "us-east-1", path_style: true });
    const id = r.json.id;
    const row = () =>
      s.ctx.db.sqlite.query("SELECT secret_enc FROM backup_configs WHERE id = ?").get(id) as { secret_enc: string };
    expect(row().secret_enc).not.toContain("s3cr3t");
    expect(s.ctx.secrets.open(row().secret_enc)).toBe("s3cr3t-value");
    expect((await viewer.get("/api/apps/web/backups/configs")).text).not.toContain("s3cr3t");
    await manager.put(`/api/backups/configs/${id}`, { target: s3("********"), retention_count: 3 });
    expect(s.ctx.secrets.open(row().secret_enc)).toBe("s3cr3t-value");
    await manager.put(`/api/backups/configs/${id}`, { target: s3() });
    expect(s.ctx.secrets.open(row().secret_enc)).toBe("s3cr3t-value");
    await manager.put(`/api/backups/configs/${id}`, { target: s3("n3w-secret") });
    expect(s.ctx.secrets.open(row().secret_enc)).toBe("n3w-secret");
    const list = (await s.root.get("/api/activity?categories=backup&limit=10")).json.entries;
    const entries = await Promise.all(list.map(async (e: any) => (await s.root.get(`/api/activity/${e.id}`)).json));
    expect(JSON.stringify(entries)).not.toMatch(/s3cr3t|n3w-secret/);
    const upd = entries.find((e: any) => e.action === "config_updated" && e.before_json?.retention_count === 7);
    expect(upd).toMatchObject({
      category: "backup",
      app_slug: "web",
      before_json: { retention_count: 7, target: { kind: "s3", access_key: "AKIA123", secret_key: "********" } },
      after_json: { retention_count: 3 },
    });
    expect((await manager.del(`/api/backups/configs/${id}`)).status).toBe(204);
  });
});

describe("runs and downloads", () => {
  it("runs now (202), lists the run newest first, and streams the archive with its length and a file name", async () => {
    const c = (await manager.post("/api/apps/web/backups/configs", local({ pre_hooks: [] }))).json;
    const r = await manager.post(`/api/backups/configs/${c.id}/run`);
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ run_id: expect.any(Number) });
    await s.ctx.backups.waitRun(c.id);
    const runs = (await viewer.get("/api/apps/web/backups/runs")).json;
    const size = runs[0].size_bytes;
    expect({ ...runs[0] }).toMatchObject({
      id: r.json.run_id,
      status: "succeeded",
      trigger: "manual",
      size_bytes: expect.any(Number),
    });
    expect(runs[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await viewer.get(`/api/backups/runs/${r.json.run_id}/download`)).status).toBe(403);
    expect((await outsider.get(`/api/backups/runs/${r.json.run_id}/download`)).status).toBe(404);
    const d = await fetch(`${s.url}/api/backups/runs/${r.json.run_id}/download`, {
      headers: { authorization: `Bearer ${s.keyFor("max").key}` },
    });
    expect(d.status).toBe(200);
    expect(d.headers.get("content-length")).toBe(String(size));
    expect(d.headers.get("content-disposition")).toMatch(/^attachment; filename="postgres-.*\.bin\.gz"$/);
    const body = new Uint8Array(await d.arrayBuffer());
    expect(new Bun.CryptoHasher("sha256").update(body).digest("hex")).toBe(runs[0].sha256);
    expect(new TextDecoder().decode(Bun.gunzipSync(body))).toBe("hello backup\n");
    expect((await s.root.get("/api/backups/runs/999999/download")).status).toBe(404);
  });
});

describe("restore from a stored run", () => {
  it("vets the stored archive before stopping anything: a hostile one fails the restore naming the entry", async () => {
    const c = (await manager.post("/api/apps/web/backups/configs", local({ strategy: "volume", service: "app", pre_hooks: [] })))
      .json;
    volume.chunks = [tar(member({ name: "data/ok" }, "x"))];
    const run = (await manager.post(`/api/backups/configs/${c.id}/run`)).json.run_id;
    await s.ctx.backups.waitRun(c.id);
    // a backup never stores such an archive (it is vetted on the way): the stored file is replaced, as a tampered or
    // corrupted store would be
    const stored = join(s.ctx.config.data_dir, "backups", s.ctx.backups.runRow(run).location!);
    writeFileSync(
      stored,
      gzip(tar(member({ name: "data/ok" }, "x"), member({ name: "data/link", type: "2", linkname: "/etc/shadow" }))),
    );
    const stops = containers.stops.length;
    const restored = volume.restored.length;
    expect((await viewer.post(`/api/backups/runs/${run}/restore`)).status).toBe(403);
    const r = await manager.post(`/api/backups/runs/${run}/restore`);
    expect(r.status).toBe(202);
    await s.ctx.backups.waitRestore(r.json.restore_id);
    const row = (await viewer.get("/api/apps/web/backups/restores")).json.find((x: any) => x.id === r.json.restore_id);
    expect(row).toMatchObject({ status: "failed", run_id: run });
    expect(row.error).toContain("data/link");
    expect(containers.stops.length).toBe(stops);
    expect(volume.restored.length).toBe(restored);
  });
});

describe("the backup failed alert", () => {
  it("fires once per incident however many runs fail, and resolves on the next success", async () => {
    const rule = await s.root.post("/api/alerts/rules", {
      name: "backup failed",
      app_slug: "web",
      kind: "backup_failed",
      threshold: 0,
      duration: "0s",
      webhook_ids: [],
      enabled: true,
    });
    expect(rule.status).toBe(201);
    const c = (await manager.post("/api/apps/web/backups/configs", local({ pre_hooks: [], service: "app" }))).json;
    postgres.chunks = [new Error("pg_dump: could not connect")];
    for (let i = 0; i < 3; i++) {
      expect((await manager.post(`/api/backups/configs/${c.id}/run`)).status).toBe(202);
      await s.ctx.backups.waitRun(c.id);
    }
    const history = async () => (await s.root.get(`/api/alerts/history?rule=${rule.json.id}`)).json.entries;
    expect(await history()).toEqual([
      expect.objectContaining({ state: "firing", app_slug: "web", message: expect.stringContaining("could not connect") }),
    ]);
    postgres.chunks = [new TextEncoder().encode("hello backup\n")];
    await manager.post(`/api/backups/configs/${c.id}/run`);
    await s.ctx.backups.waitRun(c.id);
    expect((await history()).map((e: any) => e.state)).toEqual(["resolved", "firing"]);
  });
});

describe("upload-restore", () => {
  const form = (file: Uint8Array, strategy = "volume", container?: string) => {
    const f = new FormData();
    f.set("file", new Blob([file as BlobPart]), "backup.tar.gz");
    f.set("strategy", strategy);
    if (container) f.set("container", container);
    return f;
  };

  it("answers 413 past 32 MiB", async () => {
    const r = await manager.post("/api/apps/web/backups/upload-restore", form(new Uint8Array(32 * 1024 * 1024 + 1)));
    expect(r.status).toBe(413);
  });

  it("answers 413 to a chunked body (no length declared) once it passes 32 MiB, leaving no temp file", async () => {
    const head = new TextEncoder().encode('--b\r\ncontent-disposition: form-data; name="file"; filename="x"\r\n\r\n');
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent === 0) c.enqueue(head);
        sent += 1 << 20;
        if (sent > 40 << 20) c.close();
        else c.enqueue(new Uint8Array(1 << 20));
      },
    });
    const r = await fetch(`${s.url}/api/apps/web/backups/upload-restore`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.keyFor("max").key}`, "content-type": "multipart/form-data; boundary=b" },
      body,
      duplex: "half",
    } as RequestInit);
    // the server itself may cut the connection first (its cap is 33 MiB of received bytes): 413 either way
    expect(r.status).toBe(413);
    await until(() => s.ctx.backups.uploads().length === 0, { what: "the temp file removed" });
  });

  it("refuses a hostile archive with 400 naming the entry, restoring nothing and leaving no temp file", async () => {
    const hostile = gzip(
      tar(member({ name: "data/ok.txt" }, "fine"), member({ name: "../../etc/cron.d/evil" }, "* * * * * root sh")),
    );
    const r = await manager.post("/api/apps/web/backups/upload-restore", form(hostile, "volume", "sundeck-web-app-1"));
    expect(r.status).toBe(400);
    expect(r.text).toContain("../../etc/cron.d/evil");
    expect(volume.restored).toEqual([]);
    expect(containers.stops).toEqual([]);
    expect(s.ctx.backups.uploads()).toEqual([]);
  });

  it("restores a clean archive (202), recorded with its status and an activity entry", async () => {
    const clean = gzip(tar(member({ name: "data/ok.txt" }, "fine")));
    const r = await manager.post("/api/apps/web/backups/upload-restore", form(clean, "volume", "sundeck-web-app-1"));
    expect(r.status).toBe(202);
    await s.ctx.backups.waitRestore(r.json.restore_id);
    const list = (await viewer.get("/api/apps/web/backups/restores")).json;
    expect(list[0]).toMatchObject({ id: r.json.restore_id, run_id: null, strategy: "volume", status: "succeeded", error: null });
    expect(volume.restored).toHaveLength(1);
    expect(containers.stops).toEqual(["sundeck-web-app-1"]);
    expect(containers.starts).toEqual(["sundeck-web-app-1"]);
    expect(s.ctx.backups.uploads()).toEqual([]);
    const e = (await s.root.get("/api/activity?categories=backup&limit=1")).json.entries[0];
    expect(e).toMatchObject({ action: "restore_succeeded", app_slug: "web" });
  });

  it("answers the fifth concurrent restore with 429 and Retry-After", async () => {
    let open!: () => void;
    postgres.gate = new Promise<void>((r) => {
      open = r;
    });
    const dump = gzip(new TextEncoder().encode("dump"));
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await manager.post("/api/apps/web/backups/upload-restore", form(dump, "postgres", "sundeck-web-db-1"));
      expect(r.status).toBe(202);
      ids.push(r.json.restore_id);
    }
    const fifth = await manager.post("/api/apps/web/backups/upload-restore", form(dump, "postgres", "sundeck-web-db-1"));
    expect(fifth.status).toBe(429);
    expect(fifth.headers.get("retry-after")).toBe("30");
    open();
    postgres.gate = null;
    for (const id of ids) await s.ctx.backups.waitRestore(id);
    await until(
      async () =>
        (await manager.post("/api/apps/web/backups/upload-restore", form(dump, "postgres", "sundeck-web-db-1"))).status === 202,
      {
        timeout: 5000,
        what: "a slot after the restores ended",
      },
    );
  });
});
