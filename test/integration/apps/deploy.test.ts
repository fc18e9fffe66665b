/** Deploying through the API on the real engine: versions, activity, failure with rollback, explicit rollback. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { appActivity, freePort, startDockerServer, waitApp, waitSettled, webCompose } from "../../helpers/apps";
import { dockerOk, removeProject } from "../../helpers/docker";
import type { TestServer } from "../../helpers/server";
import { openWs } from "../../helpers/ws";

const SLUG = "itest-deploy";
let s: TestServer;
let port: number;

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer();
  port = await freePort();
});
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("deploy through the API", () => {
  it("answers 202 with a deploy id, and the app runs behind a loopback port", async () => {
    const r = await s.root.post("/api/apps/deploy", { slug: SLUG, compose: webCompose(port), env: { GREETING: "hello" } });
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ slug: SLUG, deploy_id: expect.any(Number) });
    const app = await waitApp(s.root, SLUG, (a) => a.status === "running");
    expect(app.services[0]).toMatchObject({ name: "web", image: "sundeck-test/web:latest", replicas: 1 });
    expect(app.services[0].containers).toHaveLength(1);
    expect(app.current_version).toMatchObject({ version: 1 });
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(res.status).toBe(200);
    const ports = await dockerOk("port", app.services[0].containers[0].id);
    expect(ports.trim()).toBe(`8080/tcp -> 127.0.0.1:${port}`);
    // the files are the desired state
    const dir = join(s.ctx.config.apps_dir, SLUG);
    expect(readFileSync(join(dir, "docker-compose.yml"), "utf8")).toBe(webCompose(port));
    expect(readFileSync(join(dir, ".env"), "utf8")).toContain("GREETING=hello");
  });

  it("records creation, the compose content and the deploy", async () => {
    const acts = await appActivity(s.root, SLUG);
    const kinds = acts.map((e) => `${e.category}/${e.action}`);
    expect(kinds).toContain("lifecycle/created");
    expect(kinds).toContain("compose/compose_created");
    expect(kinds).toContain("deploy/deploy_succeeded");
    const created = acts.find((e) => e.action === "compose_created");
    expect(created.compose_version_id).toEqual(expect.any(Number));
    const detail = (await s.root.get(`/api/activity/${created.id}`)).json;
    expect(JSON.stringify(detail.after_json)).not.toContain("hello");
  });

  it("makes a new version when content changes, says what changed, and keeps identical content as one version", async () => {
    await s.root.post("/api/apps/deploy", { slug: SLUG, compose: webCompose(port), env: { GREETING: "bonjour" } });
    const app = await waitApp(s.root, SLUG, (a) => a.current_version?.version === 2 && a.status === "running");
    expect(app.last_deploy.status).toBe("succeeded");
    const changed = (await appActivity(s.root, SLUG)).find((e) => e.action === "compose_changed");
    expect(changed.summary).toContain("GREETING");
    expect(changed.summary).not.toContain("bonjour");
    const again = await s.root.post("/api/apps/deploy", { slug: SLUG, compose: webCompose(port), env: { GREETING: "bonjour" } });
    expect(again.status).toBe(202);
    await waitSettled(s.root, SLUG);
    expect((await s.root.get(`/api/apps/${SLUG}/versions`)).json).toHaveLength(2);
  });

  it("keeps the current .env when a deploy omits env", async () => {
    await s.root.post("/api/apps/deploy", { slug: SLUG, compose: webCompose(port) });
    await waitSettled(s.root, SLUG);
    expect((await s.root.get(`/api/apps/${SLUG}/env`)).json).toEqual({ GREETING: "bonjour" });
  });

  it("queues a second deploy behind the running one, says so in its stream, and refuses a third naming both", async () => {
    const ws = await openWs(s.url, `/api/apps/${SLUG}/deploy-logs`, { cookie: s.root.cookie });
    const first = await s.root.post("/api/apps/deploy", { slug: SLUG, compose: webCompose(port), env: { GREETING: "one" } });
    const second = await s.root.post("/api/apps/deploy", { slug: SLUG, compose: webCompose(port), env: { GREETING: "two" } });
    const third = await s.root.post("/api/apps/deploy", { slug: SLUG, compose: webCompose(port), env: { GREETING: "three" } });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.json.deploy_id).toBeGreaterThan(first.json.deploy_id);
    expect(third.status).toBe(409);
    expect(third.text).toBe(`Conflict: ${SLUG} is busy: deploy is running and deploy is waiting`);
    await ws.waitClose(60_000);
    expect((ws.frames as any[]).some((f) => f.output === "deploy waits for deploy to finish")).toBe(true);
    const app = await waitApp(
      s.root,
      SLUG,
      (a) => a.last_deploy?.id === second.json.deploy_id && a.last_deploy.status !== "running",
    );
    expect(app.last_deploy.status).toBe("succeeded");
    // the queued content was written when its turn came, and is what runs now
    expect((await s.root.get(`/api/apps/${SLUG}/env`)).json).toEqual({ GREETING: "two" });
    const first1 = (await s.root.get(`/api/apps/${SLUG}/deploys/${first.json.deploy_id}`)).json;
    expect(first1.status).toBe("succeeded");
  });

  it("records a failed deploy with its error and rolls back to the last good version", async () => {
    const before = (await s.root.get(`/api/apps/${SLUG}`)).json.current_version.version;
    const broken = webCompose(port).replace(
      "stop_grace_period: 1s",
      'stop_grace_period: 1s\n    command: ["sh", "-c", "echo boom >&2; exit 3"]',
    );
    expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose: broken })).status).toBe(202);
    const app = await waitApp(s.root, SLUG, (a) => a.status === "running" && a.last_error !== null);
    expect(app.current_version.version).toBe(before);
    expect(app.last_error).toContain("exited with code 3");
    expect(app.last_error).toContain("boom");
    const acts = await appActivity(s.root, SLUG);
    const failed = acts.find((e) => e.action === "deploy_failed");
    expect(failed.error).toContain("exited with code 3");
    expect(acts.find((e) => e.action === "rolled_back")).toBeDefined();
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    // the user's broken file stays for them to fix, and is not retried
    expect(readFileSync(join(s.ctx.config.apps_dir, SLUG, "docker-compose.yml"), "utf8")).toBe(broken);
  });

  it("rolls back to any kept version, making it the desired state", async () => {
    const versions = (await s.root.get(`/api/apps/${SLUG}/versions`)).json;
    const v1 = versions.find((v: any) => v.version === 1);
    expect((await s.root.post(`/api/apps/${SLUG}/rollback`, { version_id: v1.id })).status).toBe(202);
    const app = await waitApp(s.root, SLUG, (a) => a.current_version?.version === 1 && a.status === "running");
    expect(app.last_error).toBeNull();
    const rolled = (await appActivity(s.root, SLUG)).find((e) => e.category === "deploy");
    expect(rolled).toMatchObject({ action: "rolled_back", actor_name: "root", summary: `${SLUG} rolled back to version 1` });
    expect((await s.root.get(`/api/apps/${SLUG}/env`)).json).toEqual({ GREETING: "hello" });
    expect((await s.root.get(`/api/apps/${SLUG}/compose`)).json.compose).toBe(webCompose(port));
    expect((await s.root.post(`/api/apps/${SLUG}/rollback`, { version_id: 999999 })).status).toBe(404);
  });

  it("records endpoint changes as endpoint entries", async () => {
    const routed = (host: string) =>
      webCompose(port).replace(
        "stop_grace_period: 1s",
        `stop_grace_period: 1s\n    labels:\n      sundeck.domain: ${host}\n      sundeck.port: "8080"`,
      );
    await s.root.post("/api/apps/deploy", { slug: SLUG, compose: routed("a.example.test") });
    await waitSettled(s.root, SLUG);
    await s.root.post("/api/apps/deploy", { slug: SLUG, compose: routed("b.example.test") });
    await waitSettled(s.root, SLUG);
    const entries = (await s.root.get(`/api/apps/${SLUG}/activity?categories=endpoint`)).json.entries;
    expect(entries[0].summary).toContain("endpoint added: b.example.test → web:8080");
    expect(entries[0].summary).toContain("endpoint removed: a.example.test → web:8080");
    expect(entries[1].summary).toContain("endpoint added: a.example.test");
    const app = (await s.root.get(`/api/apps/${SLUG}`)).json;
    expect(app.endpoints).toEqual([{ service: "web", hosts: ["b.example.test"], port: 8080, path: "/", tls: null }]);
  });

  it("removes the app, its containers and files, keeping its activity", async () => {
    expect((await s.root.del(`/api/apps/${SLUG}?volumes=true`)).status).toBe(202);
    await waitApp(s.root, SLUG, () => false, 100).catch(() => {});
    const gone = await (async () => {
      for (let i = 0; i < 300; i++) {
        if ((await s.root.get(`/api/apps/${SLUG}`)).status === 404) return true;
        await Bun.sleep(100);
      }
      return false;
    })();
    expect(gone).toBe(true);
    expect((await dockerOk("ps", "-aq", "--filter", `label=com.docker.compose.project=sundeck-${SLUG}`)).trim()).toBe("");
    const acts = (await s.root.get(`/api/activity?app=${SLUG}&limit=200`)).json.entries;
    expect(acts[0]).toMatchObject({ category: "lifecycle", action: "removed" });
  });
});
