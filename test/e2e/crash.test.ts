/** kill -9 during a deploy, restart, and the app converges: the interrupted deploy runs again. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { freePort } from "../helpers/apps";
import { initConfig, type RunningBinary, SERVE_ENV, startBinary } from "../helpers/binary";
import { ensureTestImages, removeProject, requireDocker } from "../helpers/docker";
import { Client, until } from "../helpers/http";
import { tempDir } from "../helpers/tmp";

const SLUG = "e2e-crash";
const dir = tempDir();
let server: RunningBinary | undefined;
let config: string;
let key: string;

beforeAll(async () => {
  await requireDocker();
  await ensureTestImages();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  ({ config, key } = await initConfig(dir));
});
afterAll(async () => {
  await server?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("kill -9 during a deploy", () => {
  it("converges after a restart: the interrupted deploy is run again", async () => {
    server = await startBinary(["--config", config], { env: SERVE_ENV });
    const api = new Client(server.url, { bearer: key });
    const port = await freePort();
    // the healthcheck passes only after a few seconds, so the deploy is still stabilising when we kill
    const compose = `services:
  web:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 4; mkdir -p /w; echo ok > /w/index.html; httpd -f -p 8080 -h /w & wait"]
    ports: ["${port}:8080"]
    healthcheck:
      test: ["CMD", "test", "-f", "/w/index.html"]
      interval: 1s
      retries: 30
    stop_grace_period: 1s
`;
    expect((await api.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
    await until(
      async () => {
        const a = (await api.get(`/api/apps/${SLUG}`)).json;
        return a?.status === "deploying" && a.services[0]?.containers.length === 1;
      },
      { timeout: 30_000, what: "the deploy to reach its stabilisation window" },
    );
    server.proc.kill("SIGKILL");
    await server.proc.exited;

    server = await startBinary(["--config", config], { env: SERVE_ENV });
    const again = new Client(server.url, { bearer: key });
    const app = await until(
      async () => {
        const a = (await again.get(`/api/apps/${SLUG}`)).json;
        return a?.status === "running" && a.last_deploy?.status === "succeeded" ? a : null;
      },
      { timeout: 60_000, what: "the app to converge" },
    );
    expect(app.current_version.version).toBe(1);
    const deploys = (await again.get(`/api/apps/${SLUG}/deploys`)).json;
    expect(deploys.map((d: any) => d.status)).toEqual(["succeeded", "interrupted"]);
    expect(deploys[1].error).toContain("interrupted");
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("ok\n");
    expect(server.output()).toContain("deploys were interrupted: running them again");
  }, 120_000);
});
