/** The compose driver against the real engine and whichever compose this machine has (v1 on Debian). */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createComposeDriver, detectCompose } from "../../../src/docker/compose";
import { createRunner } from "../../../src/docker/runner";
import type { ComposeDriver, ContainerSummary, Engine, ProjectRef } from "../../../src/docker/types";
import { docker, ensureTestImages, removeProject, requireDocker, TEST_IMAGES, uniqueName } from "../../helpers/docker";
import { until } from "../../helpers/http";
import { tempDir } from "../../helpers/tmp";

const runner = createRunner();
const NAME = uniqueName("sdt-compose");
let engine: Engine;
let compose: ComposeDriver;
let project: ProjectRef;

const COMPOSE_FILE = `services:
  web:
    image: ${TEST_IMAGES.web}
    stop_grace_period: 1s
    ports: ["127.0.0.1::8080"]
  api:
    image: ${TEST_IMAGES.web}
    stop_grace_period: 1s
    environment:
      GREETING: \${GREETING:-unset}
      LEAKED: \${SUNDECK_COMPOSE_LEAK:-unset}
    volumes: ["data:/data"]
volumes:
  data:
`;

beforeAll(async () => {
  engine = await requireDocker();
  await ensureTestImages();
  const found = await detectCompose(runner);
  if (!found) throw new Error("neither `docker compose` nor `docker-compose` works on this machine");
  compose = found;
  const dir = tempDir("sundeck-compose-");
  writeFileSync(join(dir, "docker-compose.yml"), COMPOSE_FILE);
  project = { name: NAME, file: join(dir, "docker-compose.yml"), projectDir: dir, env: { GREETING: "hello" } };
});

afterAll(async () => {
  await removeProject(NAME);
});

const list = (): Promise<ContainerSummary[]> => engine.containers({ project: NAME });
const ofService = (cs: ContainerSummary[], s: string) => cs.filter((c) => c.service === s);

async function body(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/`);
  return res.ok ? (await res.text()).trim() : "";
}

describe("compose detection", () => {
  it("finds compose, v1 where the docker CLI has no compose plugin", async () => {
    const v2 = await runner.run(["docker", "compose", "version"]);
    expect(compose.flavor).toBe(v2.code === 0 ? "v2" : "v1");
    expect(compose.version).toMatch(/^\d+\.\d+/);
  });

  it("answers null when no compose can run", async () => {
    expect(await detectCompose(runner, { PATH: "/nonexistent", HOME: "/tmp" })).toBeNull();
  });
});

describe("compose driver", () => {
  it("brings a project up with --scale, ports on loopback, and streams its progress", async () => {
    const lines: string[] = [];
    const r = await compose.up(project, { scale: { web: 2 }, onLine: (l) => lines.push(l) });
    expect(r.code, r.output).toBe(0);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).toContain(NAME);
    // the image is local: nothing was pulled
    expect(r.output).not.toMatch(/pulling/i);

    const cs = await until(
      async () => {
        const all = await list();
        return all.length === 3 && all.every((c) => c.state === "running") ? all : null;
      },
      { timeout: 15000, what: "3 running containers" },
    );
    const web = ofService(cs, "web");
    expect(web.map((c) => c.number).sort()).toEqual([1, 2]);
    expect(ofService(cs, "api")).toHaveLength(1);

    const hosts = new Set<string>();
    for (const c of web) {
      const port = c.ports.find((p) => p.privatePort === 8080);
      expect(port?.ip).toBe("127.0.0.1");
      hosts.add(await until(() => body(port!.publicPort!), { timeout: 10000, what: "the web replica to answer" }));
    }
    expect(hosts.size).toBe(2);
  });

  it("passes the project env to compose and nothing of the server's env", async () => {
    process.env.SUNDECK_COMPOSE_LEAK = "leaked";
    try {
      const api = ofService(await list(), "api")[0];
      const env: string[] = (await engine.inspect(api.id)).Config.Env;
      expect(env).toContain("GREETING=hello");
      expect(env).toContain("LEAKED=unset");
    } finally {
      delete process.env.SUNDECK_COMPOSE_LEAK;
    }
  });

  it("stops, starts and restarts the named services only", async () => {
    expect((await compose.stop(project, ["web"])).code).toBe(0);
    let cs = await list();
    expect(ofService(cs, "web").every((c) => c.state === "exited")).toBe(true);
    expect(ofService(cs, "api")[0].state).toBe("running");

    expect((await compose.start(project, ["web"])).code).toBe(0);
    cs = await list();
    expect(cs.every((c) => c.state === "running")).toBe(true);

    const api = ofService(cs, "api")[0];
    const before = (await engine.inspect(api.id)).State.StartedAt;
    const webBefore = (await engine.inspect(ofService(cs, "web")[0].id)).State.StartedAt;
    expect((await compose.restart(project, ["api"])).code).toBe(0);
    expect((await engine.inspect(api.id)).State.StartedAt).not.toBe(before);
    expect((await engine.inspect(ofService(cs, "web")[0].id)).State.StartedAt).toBe(webBefore);
    expect((await compose.restart(project)).code).toBe(0);
    expect((await list()).every((c) => c.state === "running")).toBe(true);
  });

  it("scales back down and removes the orphans of a changed file", async () => {
    const webOnly = join(project.projectDir, "web-only.yml");
    writeFileSync(webOnly, COMPOSE_FILE.slice(0, COMPOSE_FILE.indexOf("  api:")));
    const r = await compose.up({ ...project, file: webOnly }, { scale: { web: 1 } });
    expect(r.code, r.output).toBe(0);
    const cs = await list();
    expect(cs.map((c) => `${c.service}/${c.number}`)).toEqual(["web/1"]);
    // back to the full file for the next steps
    expect((await compose.up(project)).code).toBe(0);
    expect(ofService(await list(), "api")).toHaveLength(1);
  });

  it("reports a failed pull of a local-only image through the exit code", async () => {
    const lines: string[] = [];
    const r = await compose.pull(project, ["web"], { onLine: (l) => lines.push(l) });
    expect(r.code).not.toBe(0);
    expect(r.killed).toBe(false);
    expect(lines.length).toBeGreaterThan(0);
    // the running project is untouched
    expect((await list()).every((c) => c.state === "running")).toBe(true);
  });

  it("down removes the containers and keeps named volumes unless asked", async () => {
    const volume = `${NAME}_data`;
    expect((await compose.down(project)).code).toBe(0);
    expect(await list()).toHaveLength(0);
    expect((await docker("volume", "inspect", volume)).code).toBe(0);

    expect((await compose.up(project, { services: ["api"] })).code).toBe(0);
    expect((await list()).map((c) => c.service)).toEqual(["api"]);
    expect((await compose.down(project, { volumes: true })).code).toBe(0);
    expect(await list()).toHaveLength(0);
    expect((await docker("volume", "inspect", volume)).code).not.toBe(0);
  });

  it("cancelling an up kills compose and reports it", async () => {
    const ctl = new AbortController();
    const r = await compose.up(project, {
      signal: ctl.signal,
      onLine: () => ctl.abort(),
    });
    expect(r.killed).toBe(true);
    expect(r.code).not.toBe(0);
    // whatever the cancelled run created is converged away by a down
    expect((await compose.down(project, { volumes: true })).code).toBe(0);
    expect(await list()).toHaveLength(0);
    expect((await docker("network", "inspect", `${NAME}_default`)).code).not.toBe(0);
  });

  it("a driver for a compose that is not installed fails with 127, not an exception", async () => {
    const missing = createComposeDriver(runner, "v1", "1.29.2", { env: { PATH: "/nonexistent", HOME: "/tmp" } });
    const r = await missing.up(project);
    expect(r.code).toBe(127);
    expect(r.output).toContain("docker-compose: command not found");
  });
});
