/** Cancel, turning auto-rollback off, and status kept current by Docker events alone. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { appActivity, freePort, startDockerServer, waitApp, waitSettled } from "../../helpers/apps";
import { dockerOk, removeProject } from "../../helpers/docker";
import type { TestServer } from "../../helpers/server";

const SLUG = "itest-control";
let s: TestServer;
let port: number;

const good = (p: number) => `services:
  web:
    image: sundeck-test/web:latest
    ports: ["${p}:8080"]
    stop_grace_period: 1s
`;
// healthy never: the deploy sits in its stabilisation window until cancelled or timed out
const neverHealthy = (p: number) => `${good(p)}    healthcheck:
      test: ["CMD", "false"]
      interval: 1s
      retries: 1000
`;

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  // no periodic status refresh: only Docker events can update what the API reports
  s = await startDockerServer({}, { statusEveryMs: 3_600_000, stabilizeMs: 120_000 });
  port = await freePort();
  expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose: good(port) })).status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running");
});
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("status from docker events", () => {
  it("notices containers stopped or killed behind Sundeck's back within a couple of seconds", async () => {
    const id = (await s.root.get(`/api/apps/${SLUG}`)).json.services[0].containers[0].id;
    await dockerOk("stop", "-t", "1", id);
    let started = Date.now();
    await waitApp(s.root, SLUG, (a) => a.status === "stopped", 5000);
    expect(Date.now() - started).toBeLessThan(3000);
    await dockerOk("start", id);
    await waitApp(s.root, SLUG, (a) => a.status === "running", 5000);
    await dockerOk("kill", id);
    started = Date.now();
    await waitApp(s.root, SLUG, (a) => a.status === "failed", 5000);
    expect(Date.now() - started).toBeLessThan(3000);
    await dockerOk("start", id);
    await waitApp(s.root, SLUG, (a) => a.status === "running", 5000);
  });
});

describe("cancel", () => {
  it("stops a deploy in its stabilisation window and brings back the good version", async () => {
    expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose: neverHealthy(port) })).status).toBe(202);
    await waitApp(
      s.root,
      SLUG,
      (a) => a.status === "deploying" && a.services[0].containers.some((c: any) => c.health === "starting"),
    );
    const r = await s.root.post(`/api/apps/${SLUG}/cancel`);
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ slug: SLUG, cancelled: true });
    const app = await waitApp(s.root, SLUG, (a) => a.status === "running" && a.last_deploy?.status !== "running");
    expect(app.current_version.version).toBe(1);
    const deploys = (await s.root.get(`/api/apps/${SLUG}/deploys`)).json;
    expect(deploys.map((d: any) => `${d.action}:${d.status}`).slice(0, 2)).toEqual(["rollback:succeeded", "deploy:cancelled"]);
    const acts = await appActivity(s.root, SLUG);
    expect(acts.find((e) => e.action === "deploy_failed").summary).toContain("was cancelled");
    expect(acts.some((e) => e.action === "rolled_back")).toBe(true);
  });
});

describe("auto-rollback off", () => {
  it("leaves a failed deploy in place when the request turns rollback off", async () => {
    await waitSettled(s.root, SLUG);
    const crash = good(port).replace("stop_grace_period: 1s", 'stop_grace_period: 1s\n    command: ["sh", "-c", "exit 7"]');
    expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose: crash, auto_rollback: false })).status).toBe(202);
    const app = await waitApp(s.root, SLUG, (a) => a.last_deploy?.status === "failed" && a.status === "failed");
    expect(app.last_error).toContain("exited with code 7");
    const deploys = (await s.root.get(`/api/apps/${SLUG}/deploys`)).json;
    expect(deploys[0]).toMatchObject({ action: "deploy", status: "failed" });
  });
});
