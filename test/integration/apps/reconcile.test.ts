/** The apps directory as desired state: drop, change, remove and restore an app's directory. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appActivity, freePort, startDockerServer, waitApp } from "../../helpers/apps";
import { dockerOk, removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";

const SLUG = "itest-drop";
let s: TestServer;
let port: number;
let dir: string;

const compose = (p: number) => `services:
  web:
    image: sundeck-test/web:latest
    ports: ["${p}:8080"]
    environment:
      COLOR: \${COLOR:-blue}
    volumes:
      - keep:/keep
    stop_grace_period: 1s
volumes:
  keep: {}
`;

/** Write a file the way editors and git do: a temp file renamed into place. */
function drop(path: string, text: string) {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer();
  port = await freePort();
  dir = join(s.ctx.config.apps_dir, SLUG);
});
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("file drops", () => {
  it("deploys a new app directory within seconds", async () => {
    mkdirSync(dir, { recursive: true });
    drop(join(dir, "docker-compose.yml"), compose(port));
    const app = await waitApp(s.root, SLUG, (a) => a.status === "running");
    expect(app.current_version.version).toBe(1);
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    const created = (await appActivity(s.root, SLUG)).find((e) => e.action === "created");
    expect(created).toMatchObject({ category: "lifecycle", actor_source: "system" });
  });

  it("redeploys when .env changes", async () => {
    drop(join(dir, ".env"), "COLOR=green\n");
    const app = await waitApp(s.root, SLUG, (a) => a.current_version?.version === 2 && a.status === "running");
    const env = await dockerOk("inspect", "-f", "{{range .Config.Env}}{{println .}}{{end}}", app.services[0].containers[0].id);
    expect(env).toContain("COLOR=green");
  });

  it("does not deploy an unsafe file, and says why", async () => {
    const unsafe = compose(port).replace("stop_grace_period: 1s", "stop_grace_period: 1s\n    privileged: true");
    drop(join(dir, "docker-compose.yml"), unsafe);
    const app = await waitApp(s.root, SLUG, (a) => a.last_deploy?.status === "failed");
    expect(app.last_error).toContain('service "web": privileged');
    expect(app.status).toBe("running");
    expect(app.current_version.version).toBe(2);
    const isPrivileged = await dockerOk("inspect", "-f", "{{.HostConfig.Privileged}}", app.services[0].containers[0].id);
    expect(isPrivileged.trim()).toBe("false");
    drop(join(dir, "docker-compose.yml"), compose(port));
    await waitApp(s.root, SLUG, (a) => a.last_deploy?.status === "succeeded" && a.status === "running");
  });

  it("takes the app down, keeping its volumes, when the directory goes", async () => {
    rmSync(dir, { recursive: true });
    await until(async () => (await s.root.get(`/api/apps/${SLUG}`)).status === 404, {
      timeout: 30_000,
      what: "the app to be removed",
    });
    await until(
      async () => (await dockerOk("ps", "-aq", "--filter", `label=com.docker.compose.project=sundeck-${SLUG}`)).trim() === "",
      {
        timeout: 30_000,
      },
    );
    expect((await dockerOk("volume", "ls", "-q", "--filter", `name=sundeck-${SLUG}_keep`)).trim()).toBe(`sundeck-${SLUG}_keep`);
    const entries = (await s.root.get(`/api/activity?app=${SLUG}&categories=lifecycle`)).json.entries;
    expect(entries[0]).toMatchObject({ action: "removed" });
  });

  it("brings a returning directory back as a live app", async () => {
    mkdirSync(dir, { recursive: true });
    drop(join(dir, "docker-compose.yml"), compose(port));
    const app = await waitApp(s.root, SLUG, (a) => a.status === "running");
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    expect(app.current_version).not.toBeNull();
    const entries = (await s.root.get(`/api/activity?app=${SLUG}&categories=lifecycle`)).json.entries;
    expect(entries[0].summary).toContain("is back");
  });

  it("ignores directories that are not apps", async () => {
    mkdirSync(join(s.ctx.config.apps_dir, "Not_A_Slug"), { recursive: true });
    writeFileSync(join(s.ctx.config.apps_dir, "Not_A_Slug", "docker-compose.yml"), compose(port + 1));
    mkdirSync(join(s.ctx.config.apps_dir, "empty-dir"), { recursive: true });
    await s.ctx.reconciler.pass();
    const slugs = (await s.root.get("/api/apps")).json.map((a: any) => a.slug);
    expect(slugs).toEqual([SLUG]);
  });
});
