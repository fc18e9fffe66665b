/**
 * Backups of Sundeck's own state on a real server with a real SQLite file: super-admins add and list state configs
 * (admins and others get 403, also on the common by-id routes: run, change, remove, download, restore), a config's schedule goes through the configs service like any config's, a run made through the common
 * `/api/backups/configs/{id}/run` stores a gzipped snapshot with its sha256 under the local target, the run is listed
 * under `/api/system/backups/runs` (not under an app), its download is a SQLite database of Sundeck, and after the
 * server stops `restore-state --run` brings the rows of that moment back.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { restoreState } from "../../../../src/cli/restore-state";
import type { Config } from "../../../../src/config/schema";
import { createContext } from "../../../../src/context";
import { LogSink } from "../../../../src/log/logger";
import { checkStateFile } from "../../../../src/modules/backups/state-restore";
import type { Client } from "../../../helpers/http";
import { startTestServer, type TestServer } from "../../../helpers/server";
import { tempDir } from "../../../helpers/tmp";

let s: TestServer;
let admin: Client;
let viewer: Client;
let stopped = false;

beforeAll(async () => {
  s = await startTestServer();
  admin = await s.user("adele", "admin");
  viewer = await s.user("vic", "viewer");
});
afterAll(async () => {
  if (!stopped) await s.stop();
});

describe("state backup configs", () => {
  it("are for super-admins only", async () => {
    for (const c of [admin, viewer]) {
      expect((await c.get("/api/system/backups/configs")).status).toBe(403);
      expect((await c.post("/api/system/backups/configs", { target: { kind: "local" } })).status).toBe(403);
      expect((await c.get("/api/system/backups/runs")).status).toBe(403);
    }
    expect((await s.anon.get("/api/system/backups/configs")).status).toBe(401);
  });

  it("refuse a bad schedule, time zone, strategy or target with a 400 naming it", async () => {
    const bad = async (body: object) => (await s.root.post("/api/system/backups/configs", body)).text;
    expect(await bad({ target: { kind: "local" }, schedule: "every day" })).toContain("schedule");
    expect(await bad({ target: { kind: "local" }, schedule: "0 3 * * *", timezone: "Mars/Olympus" })).toContain("timezone");
    expect(await bad({ target: { kind: "local" }, strategy: "postgres" })).toContain("strategy must be state");
    expect(await bad({ target: { kind: "s3", endpoint: "ftp://x", bucket: "b", access_key: "a", secret_key: "s" } })).toContain(
      "endpoint",
    );
    expect(await bad({})).toContain("target");
    expect((await s.root.get("/api/system/backups/configs")).json).toEqual([]);
  });

  it("are created with their schedule and next run, recorded as activity, and listed apart from any app's", async () => {
    const res = await s.root.post("/api/system/backups/configs", {
      target: { kind: "local" },
      schedule: "30 2 * * *",
      timezone: "Europe/Paris",
      retention_count: 3,
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      app_slug: "",
      strategy: "state",
      target: { kind: "local" },
      schedule: "30 2 * * *",
      timezone: "Europe/Paris",
      retention_count: 3,
      enabled: true,
    });
    expect(res.json.next_run_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:30:00\.000Z$/);
    expect((await s.root.get("/api/system/backups/configs")).json.map((c: { id: number }) => c.id)).toEqual([res.json.id]);
    const acts = (await s.root.get("/api/activity?category=backup")).json;
    const entries = (acts.entries ?? acts) as Array<{ action: string; target: string }>;
    expect(entries.some((e) => e.action === "config_created" && e.target === "sundeck state")).toBe(true);
  });
});

describe("state backup runs", () => {
  it("store a snapshot, list it apart from apps, download a Sundeck database, and restore-state --run brings it back", async () => {
    await s.user("before", "viewer");
    const cfg = (await s.root.post("/api/system/backups/configs", { target: { kind: "local" } })).json;
    const started = await s.root.post(`/api/backups/configs/${cfg.id}/run`);
    expect(started.status).toBe(202);
    await s.ctx.backups.waitRun(cfg.id);

    const runs = (await s.root.get("/api/system/backups/runs")).json;
    expect(runs[0]).toMatchObject({
      id: started.json.run_id,
      config_id: cfg.id,
      strategy: "state",
      status: "succeeded",
      error: null,
    });
    const run = runs[0];

    const dl = await fetch(`${s.url}/api/backups/runs/${run.id}/download`, { headers: { cookie: `session=${s.root.cookie}` } });
    expect(dl.status).toBe(200);
    const gz = new Uint8Array(await dl.arrayBuffer());
    expect(createHash("sha256").update(gz).digest("hex")).toBe(run.sha256);
    expect(gz.byteLength).toBe(run.size_bytes);
    // the snapshot holds password hashes and sealed secrets: an admin (not super) reaches none of it by id
    for (const c of [admin, viewer]) {
      expect((await c.get(`/api/backups/runs/${run.id}/download`)).status).toBe(403);
      expect((await c.post(`/api/backups/runs/${run.id}/restore`)).status).toBe(403);
      expect((await c.post(`/api/backups/configs/${cfg.id}/run`)).status).toBe(403);
      expect((await c.put(`/api/backups/configs/${cfg.id}`, { enabled: false })).status).toBe(403);
      expect((await c.del(`/api/backups/configs/${cfg.id}`)).status).toBe(403);
    }
    const file = join(tempDir(), "state.sqlite");
    await Bun.write(file, Bun.gunzipSync(gz));
    expect(checkStateFile(file).pending).toEqual([]);
    const copy = new Database(file, { readonly: true });
    expect(copy.query("SELECT count(*) AS n FROM users WHERE username = 'before'").get()).toEqual({ n: 1 });
    copy.close();

    // a change after the snapshot, then the server stops and the state comes back from the stored run
    await s.user("after", "viewer");
    await s.stop();
    stopped = true;
    s.ctx.db.sqlite.close(true);
    const r = await restoreState(s.ctx.config as Config, { runId: run.id });
    expect(r.from).toContain(`run ${run.id} (local _sundeck/state-`);
    const ctx = createContext(s.ctx.config, { logs: new LogSink({ stdout: false }) });
    try {
      const names = ctx.users.list().map((u) => u.username);
      expect(names).toContain("before");
      expect(names).not.toContain("after");
      // the snapshot caught its own run in progress: restored, that run is the succeeded one it came from, so the
      // server's recovery at start (which deletes the objects of interrupted runs) leaves its archive alone
      expect(r.settled).toBe(1);
      await ctx.backups.recover();
      const back = ctx.backups.runRow(run.id);
      expect([back.status, back.sha256, back.location]).toEqual(["succeeded", run.sha256, expect.stringContaining("_sundeck/")]);
      expect(existsSync(join(s.ctx.config.data_dir, "backups", back.location!))).toBe(true);
    } finally {
      ctx.db.sqlite.close(true);
    }
  });
});
