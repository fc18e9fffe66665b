/**
 * Apps that went wrong, on the real engine: one whose compose file is refused or broken can still be removed (by its
 * project's labels, never by checking the file again), a directory whose name is not a slug is never deployed, every
 * failed deploy is in the process log with its reason, and a failed `compose up` says why.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appActivity, freePort, startDockerServer, waitApp, webCompose } from "../../helpers/apps";
import { docker, dockerOk, removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";

const REFUSED = "wrong-refused";
const BROKEN = "wrong-broken";
const LEFTOVER = "wrong-leftover";
const GONE_DIR = "wrong-dir-gone";
const PORT_TAKEN = "wrong-port";
const BAD_NAME = "Wrong_Name";
const ALL = [REFUSED, BROKEN, LEFTOVER, GONE_DIR, PORT_TAKEN, BAD_NAME.toLowerCase()];

let s: TestServer;

const privileged = `services:
  web:
    image: sundeck-test/web:latest
    privileged: true
`;
const noImage = `services:
  web:
    command: ["sh", "-c", "sleep 1000"]
`;

/** Drop a compose file as a user would; the watcher picks it up. */
const drop = (slug: string, text: string) => {
  const dir = join(s.ctx.config.apps_dir, slug);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "docker-compose.yml"), text);
  return dir;
};

const logLines = async (): Promise<string[]> => (await s.root.get("/api/system/process-logs")).json;

const projectContainers = async (slug: string) =>
  (await dockerOk("ps", "-aq", "--filter", `label=com.docker.compose.project=sundeck-${slug}`)).trim();

/** Containers, a network and a volume of the project that no compose file of Sundeck's made (a crashed run, by hand). */
async function leftovers(slug: string) {
  const project = `com.docker.compose.project=sundeck-${slug}`;
  await dockerOk("network", "create", "--label", project, `sundeck-${slug}_default`);
  await dockerOk("volume", "create", "--label", project, `sundeck-${slug}_data`);
  await dockerOk(
    "run",
    "-d",
    "--label",
    project,
    "--label",
    "com.docker.compose.service=web",
    "--network",
    `sundeck-${slug}_default`,
    "-v",
    `sundeck-${slug}_data:/data`,
    "sundeck-test/web:latest",
  );
}

const waitGone = (slug: string) =>
  until(async () => (await s.root.get(`/api/apps/${slug}`)).status === 404, { timeout: 30_000, what: `${slug} to go` });

beforeAll(async () => {
  for (const slug of ALL) await removeProject(`sundeck-${slug}`, { volumes: true });
  await docker("network", "rm", `sundeck-${LEFTOVER}_default`, `sundeck-${GONE_DIR}_default`);
  s = await startDockerServer();
});
afterAll(async () => {
  await s?.stop();
  for (const slug of ALL) await removeProject(`sundeck-${slug}`, { volumes: true });
  await docker("network", "rm", `sundeck-${LEFTOVER}_default`, `sundeck-${GONE_DIR}_default`);
  await docker("volume", "rm", `sundeck-${GONE_DIR}_data`);
});

describe("an app whose compose file is refused or broken", () => {
  it("is refused, and the process log says why at warn", async () => {
    drop(REFUSED, privileged);
    const app = await waitApp(s.root, REFUSED, (a) => a.last_deploy?.status === "failed");
    expect(app.last_error).toContain('service "web": privileged is not allowed');
    const line = await until(async () => (await logLines()).find((l) => l.includes("deploy failed") && l.includes(REFUSED)), {
      timeout: 5_000,
      what: "the failure in the process log",
    });
    expect(line).toContain(" WARN ");
    expect(line).toContain("privileged is not allowed");
  });

  it("can be removed through the API, its directory with it", async () => {
    const r = await s.root.del(`/api/apps/${REFUSED}`);
    expect(r.status).toBe(202);
    await waitGone(REFUSED);
    expect(existsSync(join(s.ctx.config.apps_dir, REFUSED))).toBe(false);
    const entries = (await s.root.get(`/api/activity?app=${REFUSED}&categories=lifecycle`)).json.entries;
    expect(entries[0]).toMatchObject({ action: "removed" });
  });

  it("can be removed when a service has no image", async () => {
    drop(BROKEN, noImage);
    await waitApp(s.root, BROKEN, (a) => a.last_deploy?.status === "failed");
    expect((await s.root.del(`/api/apps/${BROKEN}`)).status).toBe(202);
    await waitGone(BROKEN);
  });

  it("takes down what runs under its project's labels, its volumes too when asked", async () => {
    await leftovers(LEFTOVER);
    drop(LEFTOVER, privileged);
    await waitApp(s.root, LEFTOVER, (a) => a.last_deploy?.status === "failed");
    expect(await projectContainers(LEFTOVER)).not.toBe("");
    expect((await s.root.del(`/api/apps/${LEFTOVER}?volumes=true`)).status).toBe(202);
    await waitGone(LEFTOVER);
    expect(await projectContainers(LEFTOVER)).toBe("");
    expect((await docker("network", "inspect", `sundeck-${LEFTOVER}_default`)).code).not.toBe(0);
    expect((await docker("volume", "inspect", `sundeck-${LEFTOVER}_data`)).code).not.toBe(0);
  });

  it("is taken down when its directory goes, even though its file was refused", async () => {
    await leftovers(GONE_DIR);
    const dir = drop(GONE_DIR, privileged);
    await waitApp(s.root, GONE_DIR, (a) => a.last_deploy?.status === "failed");
    rmSync(dir, { recursive: true });
    await waitGone(GONE_DIR);
    await until(async () => (await projectContainers(GONE_DIR)) === "", { timeout: 30_000, what: "the containers to go" });
    // a directory removed by hand keeps the volumes
    expect((await docker("volume", "inspect", `sundeck-${GONE_DIR}_data`)).code).toBe(0);
  });
});

describe("a directory whose name is not a slug", () => {
  it("is never deployed, by the watcher or a full pass, and gets one warning naming it and the rule", async () => {
    drop(BAD_NAME, webCompose(await freePort()));
    const warning = (lines: string[]) => lines.filter((l) => l.includes("not a valid app name") && l.includes(BAD_NAME));
    await until(async () => warning(await logLines()).length > 0, { timeout: 10_000, what: "the warning" });
    // another event on it, and a full pass: still ignored, still one warning
    writeFileSync(join(s.ctx.config.apps_dir, BAD_NAME, "docker-compose.yml"), webCompose(await freePort()));
    await s.ctx.reconciler.pass();
    const lines = warning(await logLines());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(" WARN ");
    expect(lines[0]).toContain("lowercase letters and digits separated by single dashes");
    const slugs = (await s.root.get("/api/apps")).json.map((a: any) => a.slug);
    expect(slugs.filter((x: string) => x.toLowerCase() === BAD_NAME.toLowerCase())).toEqual([]);
    expect(await projectContainers(BAD_NAME.toLowerCase())).toBe("");
    rmSync(join(s.ctx.config.apps_dir, BAD_NAME), { recursive: true });
  });
});

describe("a compose up that fails", () => {
  it("names the cause (a host port already in use) in the app's error and the deploy's activity entry", async () => {
    const port = await freePort();
    const holder = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    try {
      expect((await s.root.post("/api/apps/deploy", { slug: PORT_TAKEN, compose: webCompose(port) })).status).toBe(202);
      const app = await waitApp(s.root, PORT_TAKEN, (a) => a.last_deploy?.status === "failed");
      expect(app.last_error).toMatch(/^compose up failed \(exit \d+\): .*(address already in use|port is already allocated)/);
      expect(app.last_error).not.toContain("Encountered errors");
      const failedEntry = (await appActivity(s.root, PORT_TAKEN)).find((e) => e.action === "deploy_failed");
      expect(failedEntry.error).toBe(app.last_error);
    } finally {
      holder.stop(true);
    }
  });
});
