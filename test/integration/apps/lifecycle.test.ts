/** Lifecycle actions on a running app: stop, start, restart, scale (and refusals), pull of a local-only image. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { appActivity, freePort, startDockerServer, waitApp, waitSettled } from "../../helpers/apps";
import { dockerOk, removeProject } from "../../helpers/docker";
import type { TestServer } from "../../helpers/server";

const SLUG = "itest-life";
let s: TestServer;
let port: number;

const compose = (p: number) => `services:
  web:
    image: sundeck-test/web:latest
    ports: ["${p}:8080"]
    stop_grace_period: 1s
  worker:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
  db:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    volumes: ["data:/data"]
    stop_grace_period: 1s
volumes:
  data: {}
`;

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer();
  port = await freePort();
  expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose: compose(port) })).status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running");
});
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

const running = async () =>
  (await dockerOk("ps", "-q", "--filter", `label=com.docker.compose.project=sundeck-${SLUG}`, "--filter", "status=running"))
    .trim()
    .split("\n")
    .filter(Boolean).length;

describe("lifecycle", () => {
  it("stops an app and keeps it stopped across a reconcile pass", async () => {
    expect((await s.root.post(`/api/apps/${SLUG}/stop`)).status).toBe(202);
    const app = await waitApp(s.root, SLUG, (a) => a.status === "stopped" && a.last_deploy.status === "succeeded");
    expect(app.stopped).toBe(true);
    expect(await running()).toBe(0);
    await s.ctx.reconciler.pass();
    await waitSettled(s.root, SLUG);
    expect(await running()).toBe(0);
  });

  it("runs a start sent while the stop is still finishing after it, instead of refusing it", async () => {
    const stop = await s.root.post(`/api/apps/${SLUG}/stop`);
    expect(stop.status).toBe(202);
    // sent at once: the stop is still running (it holds the app until it has recorded how it ended)
    const start = await s.root.post(`/api/apps/${SLUG}/start`);
    expect(start.status).toBe(202);
    const app = await waitApp(
      s.root,
      SLUG,
      (a) => a.last_deploy?.id === start.json.deploy_id && a.last_deploy.status === "succeeded",
    );
    expect(app.status).toBe("running");
    expect((await s.root.get(`/api/apps/${SLUG}/deploys/${stop.json.deploy_id}`)).json.status).toBe("succeeded");
    expect((await s.root.post(`/api/apps/${SLUG}/stop`)).status).toBe(202);
    await waitApp(s.root, SLUG, (a) => a.status === "stopped" && a.last_deploy.status === "succeeded");
  });

  it("starts it again", async () => {
    expect((await s.root.post(`/api/apps/${SLUG}/start`)).status).toBe(202);
    const app = await waitApp(s.root, SLUG, (a) => a.status === "running" && a.last_deploy.status === "succeeded");
    expect(app.stopped).toBe(false);
    expect(await running()).toBe(3);
  });

  it("restarts its containers", async () => {
    const before = await dockerOk(
      "inspect",
      "-f",
      "{{.State.StartedAt}}",
      (await s.root.get(`/api/apps/${SLUG}`)).json.services[0].containers[0].id,
    );
    expect((await s.root.post(`/api/apps/${SLUG}/restart`)).status).toBe(202);
    const app = await waitApp(
      s.root,
      SLUG,
      (a) => a.status === "running" && a.last_deploy.action === "restart" && a.last_deploy.status === "succeeded",
    );
    const after = await dockerOk("inspect", "-f", "{{.State.StartedAt}}", app.services[0].containers[0].id);
    expect(after).not.toBe(before);
  });

  it("scales a stateless service, persisting the replicas", async () => {
    expect((await s.root.post(`/api/apps/${SLUG}/scale`, { services: { worker: 3 } })).status).toBe(202);
    const app = await waitApp(
      s.root,
      SLUG,
      (a) => a.status === "running" && a.services.find((x: any) => x.name === "worker").containers.length === 3,
    );
    expect(app.services.find((x: any) => x.name === "worker").replicas).toBe(3);
    const scaled = (await appActivity(s.root, SLUG)).find((e) => e.action === "scaled");
    expect(scaled.summary).toEndWith(`scaled ${SLUG}: worker replicas 1 → 3`);
    // the activity diff compares the same field before and after (compose's default of 1 named), never a bare {}
    const detail = (await s.root.get(`/api/activity/${scaled.id}`)).json;
    expect([detail.before_json, detail.after_json]).toEqual([{ replicas: { worker: 1 } }, { replicas: { worker: 3 } }]);
    // a later redeploy keeps the replicas
    const env = await s.root.put(`/api/apps/${SLUG}/env`, { TOUCH: "1" });
    expect(env.status).toBe(200);
    const again = await waitApp(s.root, SLUG, (a) => a.current_version?.version === 2 && a.status === "running");
    expect(again.services.find((x: any) => x.name === "worker").containers).toHaveLength(3);
  });

  it.each([
    ["web", "publishes host port"],
    ["db", "named volume"],
  ])("refuses to scale %s with the reason", async (svc, reason) => {
    const r = await s.root.post(`/api/apps/${SLUG}/scale`, { services: { [svc]: 2 } });
    expect(r.status).toBe(400);
    expect(r.text).toStartWith(`Bad Request: service "${svc}" cannot scale: `);
    expect(r.text).toContain(reason);
  });

  it("refuses bad scale requests", async () => {
    expect((await s.root.post(`/api/apps/${SLUG}/scale`, { services: { nope: 2 } })).text).toBe(
      'Bad Request: service "nope" does not exist',
    );
    expect((await s.root.post(`/api/apps/${SLUG}/scale`, { services: { worker: -1 } })).status).toBe(400);
    expect((await s.root.post(`/api/apps/${SLUG}/scale`, { services: {} })).status).toBe(400);
  });

  it("keeps running a local-only image when pull cannot reach a registry", async () => {
    expect((await s.root.post(`/api/apps/${SLUG}/pull`)).status).toBe(202);
    const app = await waitSettled(s.root, SLUG, 90_000);
    expect(app.last_deploy.status).toBe("succeeded");
    expect(app.status).toBe("running");
  });

  it("answers 202 to cancel when nothing runs (recording nothing), and 404 for unknown apps", async () => {
    const before = (await appActivity(s.root, SLUG)).length;
    const r = await s.root.post(`/api/apps/${SLUG}/cancel`);
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ slug: SLUG, cancelled: false });
    expect(await appActivity(s.root, SLUG)).toHaveLength(before);
    expect((await s.root.post("/api/apps/no-such-app/cancel")).status).toBe(404);
    expect((await s.root.post("/api/apps/no-such-app/stop")).status).toBe(404);
  });

  it("cancels a running operation and the one waiting, and records it", async () => {
    const restart = await s.root.post(`/api/apps/${SLUG}/restart`);
    const start = await s.root.post(`/api/apps/${SLUG}/start`);
    expect([restart.status, start.status]).toEqual([202, 202]);
    const r = await s.root.post(`/api/apps/${SLUG}/cancel`);
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ slug: SLUG, cancelled: true });
    await waitSettled(s.root, SLUG);
    const queued = (await s.root.get(`/api/apps/${SLUG}/deploys/${start.json.deploy_id}`)).json;
    expect(queued.status).toBe("cancelled");
    const entry = (await appActivity(s.root, SLUG)).find((e) => e.action === "cancelled");
    expect(entry).toMatchObject({ category: "lifecycle", target: SLUG, actor_source: "ui" });
    expect(entry.summary).toContain("restart and the waiting start");
    // bring it back for the tests after this one
    expect((await s.root.post(`/api/apps/${SLUG}/start`)).status).toBe(202);
    await waitApp(s.root, SLUG, (a) => a.status === "running" && a.last_deploy.status === "succeeded");
  });

  it("lets a viewer look but not act", async () => {
    const viewer = await s.user("vic", "viewer", [SLUG]);
    expect((await viewer.get(`/api/apps/${SLUG}`)).status).toBe(200);
    expect((await viewer.post(`/api/apps/${SLUG}/stop`)).status).toBe(403);
    expect((await viewer.get(`/api/apps/${SLUG}/env`)).json).toEqual({ TOUCH: null });
    const stranger = await s.user("sid", "manage");
    expect((await stranger.get(`/api/apps/${SLUG}`)).status).toBe(404);
    expect((await stranger.get("/api/apps")).json).toEqual([]);
  });
});
