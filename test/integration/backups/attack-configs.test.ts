/**
 * Config fields as a hostile (or careless) caller sends them, on a real server: a per-second schedule (50 configs of
 * `* * * * * *` would be a storm of runs), an expression that never fires, and a state config turned into an app
 * one (a strategy, a service or hooks on Sundeck's own database backup, which has no container to run them in).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { composeOf, fakeContainers, fakeStrategy, seedApp } from "../../helpers/backups";
import type { Client } from "../../helpers/http";
import { startTestServer, type TestServer } from "../../helpers/server";

let s: TestServer;
let manager: Client;
const postgres = fakeStrategy("postgres");

beforeAll(async () => {
  s = await startTestServer(
    {},
    { backups: { strategy: (id) => (id === "postgres" ? postgres : null), containers: fakeContainers() } },
  );
  seedApp(s.ctx, "shop", composeOf("db"));
  manager = await s.user("mallory", "manage", ["shop"]);
}, 30_000);
afterAll(() => s.stop());

const local = (schedule: string) => ({ strategy: "postgres", service: "db", target: { kind: "local" }, schedule });

describe("schedules", () => {
  for (const schedule of ["* * * * * *", "*/1 * * * * *", "0-59 * * * * *", "*/5 * * * * *", "0,30 * * * * *"]) {
    it(`refuses more than one run a minute: ${schedule}`, async () => {
      const r = await manager.post("/api/apps/shop/backups/configs", local(schedule));
      expect(r.status).toBe(400);
      expect(r.text).toContain("seconds field must be one second");
      const st = await s.root.post("/api/system/backups/configs", { target: { kind: "local" }, schedule });
      expect(st.status).toBe(400);
    });
  }

  it("takes a seconds field of one second, and refuses an expression that never fires (Feb 30)", async () => {
    expect((await manager.post("/api/apps/shop/backups/configs", local("30 15 3 * * *"))).status).toBe(201);
    const never = await manager.post("/api/apps/shop/backups/configs", local("0 0 30 2 *"));
    expect(never.status).toBe(400);
    expect(never.text).toContain("never fires");
  });
});

describe("how many", () => {
  it("lets an app have at most 50 configs (each may run every minute, all at once)", async () => {
    seedApp(s.ctx, "many", composeOf("db"));
    const m = await s.user("mo", "manage", ["many"]);
    for (let i = 0; i < 50; i++) {
      const r = await m.post("/api/apps/many/backups/configs", local("0 3 1 1 *"));
      expect(r.status).toBe(201);
    }
    const over = await m.post("/api/apps/many/backups/configs", local("0 3 1 1 *"));
    expect(over.status).toBe(409);
    expect(over.text).toContain("at most 50 backup configs");
  });
});

describe("a state config stays one", () => {
  it("takes no strategy, service or hooks", async () => {
    const st = (await s.root.post("/api/system/backups/configs", { target: { kind: "local" } })).json;
    for (const body of [{ strategy: "postgres" }, { pre_hooks: ["id"] }, { post_hooks: ["id"] }, { service: "db" }]) {
      const r = await s.root.put(`/api/backups/configs/${st.id}`, body);
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
      expect(r.text).toContain("sundeck state config takes no");
    }
    const row = (await s.root.get("/api/system/backups/configs")).json[0];
    expect(row).toMatchObject({ strategy: "state", pre_hooks: [], post_hooks: [] });
    expect((await s.root.put(`/api/backups/configs/${st.id}`, { retention_count: 2, pre_hooks: [] })).status).toBe(200);
  });
});
