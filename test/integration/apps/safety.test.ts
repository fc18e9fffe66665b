/**
 * Compose safety on the real deploy paths: every security fixture is refused by the API with nothing written or run,
 * and a refused version cannot come back through rollback. Published ports of every syntax end up on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnvFile } from "../../../src/compose/envfile";
import { freePort, startDockerServer, waitApp } from "../../helpers/apps";
import { dockerOk, removeProject } from "../../helpers/docker";
import type { TestServer } from "../../helpers/server";

const FIXTURES = join(import.meta.dir, "../../fixtures/compose/security");
const SEC = "itest-sec";
const PORTS = "itest-ports";
let s: TestServer;

beforeAll(async () => {
  for (const p of [SEC, PORTS]) await removeProject(`sundeck-${p}`, { volumes: true });
  s = await startDockerServer();
});
afterAll(async () => {
  await s?.stop();
  for (const p of [SEC, PORTS]) await removeProject(`sundeck-${p}`, { volumes: true });
});

// covered by the corpus unit test instead: fixtures that need sibling files or a symlink made at test time, and the
// ones naming Sundeck's default directories (this server's data and apps dirs are temporary)
const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".yml") && !existsSync(join(FIXTURES, f.replace(/\.yml$/, ".files"))) && !f.includes("symlink"))
  .filter((f) => !/\/var\/lib\/sundeck|\/etc\/sundeck/.test(readFileSync(join(FIXTURES, f), "utf8")))
  .sort();

describe("unsafe compose through the API", () => {
  it("has a corpus to check", () => {
    expect(fixtures.length).toBeGreaterThan(80);
  });

  it.each(fixtures)("refuses %s with the service named, deploying nothing", async (file) => {
    const text = readFileSync(join(FIXTURES, file), "utf8");
    const [, , service] = /^# expect: (\S+) (\S+)/.exec(text) ?? [];
    const envPath = join(FIXTURES, file.replace(/\.yml$/, ".env"));
    const env = existsSync(envPath) ? parseEnvFile(readFileSync(envPath, "utf8")) : undefined;
    const r = await s.root.post("/api/apps/deploy", { slug: SEC, compose: text, env });
    expect(r.status).toBe(400);
    expect(r.text).toStartWith("Bad Request: ");
    if (service && service !== "-") expect(r.text).toContain(`service "${service}"`);
    expect(existsSync(join(s.ctx.config.apps_dir, SEC))).toBe(false);
    expect((await s.root.get(`/api/apps/${SEC}`)).status).toBe(404);
  });

  it("left no container behind", async () => {
    expect((await dockerOk("ps", "-aq", "--filter", `label=com.docker.compose.project=sundeck-${SEC}`)).trim()).toBe("");
  });

  it("refuses to roll back to a version that is unsafe", async () => {
    const port = await freePort();
    const good = `services:\n  web:\n    image: sundeck-test/web:latest\n    ports: ["${port}:8080"]\n    stop_grace_period: 1s\n`;
    expect((await s.root.post("/api/apps/deploy", { slug: SEC, compose: good })).status).toBe(202);
    await waitApp(s.root, SEC, (a) => a.status === "running");
    // an unsafe file dropped by hand is kept as a (failed) version, never run
    const path = join(s.ctx.config.apps_dir, SEC, "docker-compose.yml");
    writeFileSync(`${path}.tmp`, good.replace("stop_grace_period: 1s", "stop_grace_period: 1s\n    pid: host"));
    renameSync(`${path}.tmp`, path);
    await waitApp(s.root, SEC, (a) => a.last_deploy?.status === "failed");
    const bad = (await s.root.get(`/api/apps/${SEC}/versions`)).json.find((v: any) => v.status === "failed");
    const r = await s.root.post(`/api/apps/${SEC}/rollback`, { version_id: bad.id });
    expect(r.status).toBe(400);
    expect(r.text).toContain('service "web"');
    const pidMode = await dockerOk(
      "inspect",
      "-f",
      "{{.HostConfig.PidMode}}",
      (await s.root.get(`/api/apps/${SEC}`)).json.services[0].containers[0].id,
    );
    expect(pidMode.trim()).toBe("");
  });
});

describe("published ports", () => {
  it("bind 127.0.0.1 for every syntax unless an interface is given", async () => {
    const p = await Promise.all(Array.from({ length: 9 }, () => freePort()));
    const compose = `services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    ports:
      - ${p[0]}:8080
      - "${p[1]}:8081"
      - "${p[2]}-${p[2] + 1}:8082-8083"
      - "8084"
      - "${p[3]}:8085/udp"
      - target: 8086
        published: ${p[4]}
      - target: 8087
        published: "${p[5]}"
        protocol: tcp
      - "127.0.0.1:${p[6]}:8088"
      - target: 8089
        published: ${p[7]}
        host_ip: 0.0.0.0
  api:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    ports: ["${p[8]}:8080", 8090]
`;
    expect((await s.root.post("/api/apps/deploy", { slug: PORTS, compose })).status).toBe(202);
    const app = await waitApp(s.root, PORTS, (a) => a.status === "running");
    const id = (svc: string) => app.services.find((x: any) => x.name === svc).containers[0].id;
    const lines = (await dockerOk("port", id("web")))
      .trim()
      .split("\n")
      .concat((await dockerOk("port", id("api"))).trim().split("\n"));
    const bindings = lines.map((l) => l.split(" -> ")[1]);
    const explicit = lines.filter((l) => l.startsWith("8089/tcp"));
    expect(explicit.every((l) => /-> (0\.0\.0\.0|\[::\]):/.test(l))).toBe(true);
    const rest = lines.filter((l) => !l.startsWith("8089/tcp"));
    expect(rest.length).toBeGreaterThanOrEqual(11);
    for (const l of rest) expect(l).toMatch(/ -> 127\.0\.0\.1:\d+$/);
    for (const want of [p[0], p[1], p[2], p[2] + 1, p[3], p[4], p[5], p[6], p[8]])
      expect(bindings).toContain(`127.0.0.1:${want}`);
    expect(rest.some((l) => l.startsWith("8085/udp"))).toBe(true);
    expect((await fetch(`http://127.0.0.1:${p[0]}/`)).status).toBe(200);
  });
});
