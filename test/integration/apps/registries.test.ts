/** Registry credentials: stored sealed, never shown, and applied at pull time against a real authenticated registry. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { appActivity, freePort, startDockerServer, waitApp, waitSettled } from "../../helpers/apps";
import { docker, removeProject } from "../../helpers/docker";
import { startRegistry, type TestRegistry } from "../../helpers/registry";
import type { TestServer } from "../../helpers/server";

const SLUG = "itest-reg";
const PASSWORD = "registry-s3cret-value";
let s: TestServer;
let reg: TestRegistry;

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer();
  reg = await startRegistry({
    source: "sundeck-test/web:latest",
    repo: "private/web",
    tag: "1",
    username: "robot",
    password: PASSWORD,
  });
  await docker("rmi", "-f", reg.image);
});
afterAll(async () => {
  await s?.stop();
  reg?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  await docker("rmi", "-f", reg.image);
});

const compose = (image: string, port: number, registries?: string) => `services:
  web:
    image: ${image}
    ports: ["${port}:8080"]
    stop_grace_period: 1s
${registries ? `    labels:\n      sundeck.registries: ${registries}\n` : ""}`;

describe("registries", () => {
  let id: number;

  it("are created by admins, never showing the password, sealed at rest", async () => {
    const viewer = await s.user("rita", "viewer");
    expect(
      (await viewer.post("/api/registries", { name: "local", url: reg.host, username: "robot", password: PASSWORD })).status,
    ).toBe(403);
    const r = await s.root.post("/api/registries", { name: "local", url: reg.host, username: "robot", password: PASSWORD });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(Number),
      name: "local",
      url: reg.host,
      username: "robot",
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    id = r.json.id;
    expect((await viewer.get("/api/registries")).text).not.toContain(PASSWORD);
    const row = s.ctx.db.sqlite.query("SELECT * FROM registries").all();
    expect(JSON.stringify(row)).not.toContain(PASSWORD);
    expect((await s.root.post("/api/registries", { name: "local", url: reg.host, username: "x", password: "y" })).status).toBe(
      409,
    );
    expect((await s.root.post("/api/registries", { name: "Bad Name", url: reg.host, username: "x", password: "y" })).status).toBe(
      400,
    );
  });

  it("are recorded with name and host only", async () => {
    const e = (await s.root.get("/api/activity?categories=registry&limit=1")).json.entries[0];
    expect(e).toMatchObject({ category: "registry", action: "registry_created", target: "local" });
    const d = (await s.root.get(`/api/activity/${e.id}`)).json;
    expect(d.after_json).toEqual({ name: "local", host: reg.host });
    expect(JSON.stringify(d)).not.toContain(PASSWORD);
    expect(JSON.stringify(d)).not.toContain("robot");
  });

  it("are not used by an app that does not ask for them: its pull is refused", async () => {
    const port = await freePort();
    expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose: compose(reg.image, port) })).status).toBe(202);
    const app = await waitApp(s.root, SLUG, (a) => a.last_deploy?.status === "failed");
    expect(app.last_error).toContain(reg.image);
    expect(app.last_error).toContain(reg.host);
    expect(reg.refused).toBeGreaterThan(0);
  });

  it("let an app that names them pull a private image, through a docker config that is gone afterwards", async () => {
    const before = readdirSync(tmpdir()).filter((n) => n.startsWith("sundeck-docker-config-"));
    const port = await freePort();
    expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose: compose(reg.image, port, "local") })).status).toBe(202);
    await waitApp(s.root, SLUG, (a) => a.status === "running" && a.last_deploy?.status === "succeeded");
    expect(reg.pulls).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    const after = readdirSync(tmpdir()).filter((n) => n.startsWith("sundeck-docker-config-"));
    expect(after).toEqual(before);
  });

  it("keep the stored password when an update omits it, and disappear when removed", async () => {
    const r = await s.root.put(`/api/registries/${id}`, { name: "local", url: reg.host, username: "robot" });
    expect(r.status).toBe(200);
    await docker("rmi", "-f", reg.image);
    expect((await s.root.post(`/api/apps/${SLUG}/pull`)).status).toBe(202);
    const app = await waitSettled(s.root, SLUG, 60_000);
    expect(app.last_deploy.status).toBe("succeeded");
    expect((await s.root.del(`/api/registries/${id}`)).status).toBe(204);
    expect((await s.root.get("/api/registries")).json).toEqual([]);
    const acts = (await s.root.get("/api/activity?categories=registry")).json.entries.map((e: any) => e.action);
    expect(acts).toEqual(["registry_removed", "registry_updated", "registry_created"]);
    expect((await appActivity(s.root, SLUG)).length).toBeGreaterThan(0);
  });

  it("refuse a deploy whose label names a registry that does not exist, naming it", async () => {
    const before = (await s.root.get(`/api/apps/${SLUG}/versions`)).json.length;
    const r = await s.root.post("/api/apps/deploy", { slug: SLUG, compose: compose(reg.image, 1, "local, nosuch") });
    expect(r.status).toBe(400);
    expect(r.text).toBe('Bad Request: sundeck.registries names "local", "nosuch": no such registry');
    expect((await s.root.get(`/api/apps/${SLUG}/versions`)).json).toHaveLength(before);
  });
});

describe("registries from the config", () => {
  it("apply to every app that does not choose its own", async () => {
    const slug = `${SLUG}-global`;
    await removeProject(`sundeck-${slug}`, { volumes: true });
    const t = await startDockerServer({ registries: ["local"] });
    try {
      await docker("rmi", "-f", reg.image);
      expect(
        (
          await t.root.post("/api/registries", {
            name: "local",
            url: `http://${reg.host}`,
            username: "robot",
            password: PASSWORD,
          })
        ).status,
      ).toBe(201);
      const port = await freePort();
      expect((await t.root.post("/api/apps/deploy", { slug, compose: compose(reg.image, port) })).status).toBe(202);
      await waitApp(t.root, slug, (a) => a.status === "running" && a.last_deploy?.status === "succeeded");
      // `none` opts an app out of the global list
      await docker("rmi", "-f", reg.image);
      await t.root.post(`/api/apps/${slug}/stop`);
      await waitSettled(t.root, slug);
      expect((await t.root.post("/api/apps/deploy", { slug, compose: compose(reg.image, port, "none") })).status).toBe(202);
      const app = await waitApp(t.root, slug, (a) => a.last_deploy?.status === "failed");
      expect(app.last_error).toContain(reg.host);
    } finally {
      await t.stop();
      await removeProject(`sundeck-${slug}`, { volumes: true });
    }
  });
});
