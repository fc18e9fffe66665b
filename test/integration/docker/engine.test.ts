/** The Engine API client against the real engine: container state by project, health, images, networks, failures. */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectCompose } from "../../../src/docker/compose";
import { createEngine, healthOf } from "../../../src/docker/engine";
import { createRunner } from "../../../src/docker/runner";
import { negotiate } from "../../../src/docker/transport";
import { type ComposeDriver, DockerUnavailable, type Engine, EngineError, type ProjectRef } from "../../../src/docker/types";
import {
  dockerOk,
  ensureTestImages,
  removeByLabel,
  removeNetwork,
  removeProject,
  requireDocker,
  TEST_IMAGES,
  uniqueName,
} from "../../helpers/docker";
import { until } from "../../helpers/http";
import { tempDir } from "../../helpers/tmp";

const NAME = uniqueName("sdt-engine");
const OTHER = `${NAME}-other`;
const TEST_LABEL = `io.sundeck.test=${NAME}`;
const REGISTRY_TAG = `localhost:5000/sundeck-test/busybox:${NAME}`;
const networks: string[] = [];
let engine: Engine;
let compose: ComposeDriver;
let project: ProjectRef;

const COMPOSE_FILE = `services:
  web:
    image: ${TEST_IMAGES.web}
    stop_grace_period: 1s
    ports: ["127.0.0.1::8080"]
  hc:
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 0.2 & wait $$!; done"]
    healthcheck:
      test: ["CMD", "test", "-f", "/tmp/ready"]
      interval: 1s
      timeout: 1s
      retries: 3
      start_period: 60s
`;

beforeAll(async () => {
  engine = await requireDocker();
  await ensureTestImages();
  const found = await detectCompose(createRunner());
  if (!found) throw new Error("no compose on this machine");
  compose = found;
  const dir = tempDir("sundeck-engine-");
  writeFileSync(join(dir, "docker-compose.yml"), COMPOSE_FILE);
  project = { name: NAME, file: join(dir, "docker-compose.yml"), projectDir: dir };
});

afterAll(async () => {
  await removeProject(NAME);
  await removeProject(OTHER);
  await removeByLabel(TEST_LABEL);
  for (const n of networks) await removeNetwork(n);
  await dockerOk("rmi", REGISTRY_TAG).catch(() => {});
});

describe("engine: containers", () => {
  it("pings and reports its version", async () => {
    expect(await engine.ping()).toBe(true);
    const v = await engine.version();
    expect(v.version).toMatch(/^\d+\.\d+/);
    expect(v.apiVersion).toMatch(/^1\.\d+$/);
  });

  it("lists the containers of one project with service, number, health, networks and ports", async () => {
    await dockerOk("run", "-d", "--label", `com.docker.compose.project=${OTHER}`, TEST_IMAGES.web);
    const up = await compose.up(project, { scale: { web: 2 } });
    expect(up.code, up.output).toBe(0);

    const cs = await engine.containers({ project: NAME });
    expect(cs).toHaveLength(3);
    expect(cs.every((c) => c.project === NAME)).toBe(true);
    const web = cs.filter((c) => c.service === "web").sort((a, b) => a.number! - b.number!);
    expect(web.map((c) => c.number)).toEqual([1, 2]);
    for (const c of web) {
      expect(c.state).toBe("running");
      expect(c.status).toMatch(/^Up /);
      expect(c.health).toBeNull();
      expect(c.image).toBe(TEST_IMAGES.web);
      expect(c.labels["com.docker.compose.service"]).toBe("web");
      expect(c.networks[`${NAME}_default`]).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(c.ports).toContainEqual({ privatePort: 8080, publicPort: expect.any(Number), ip: "127.0.0.1", type: "tcp" });
      expect(c.createdAt).toBeGreaterThan(Date.now() / 1000 - 600);
      expect(c.name.startsWith("/")).toBe(false);
    }
    expect((await engine.containers({ project: OTHER })).map((c) => c.project)).toEqual([OTHER]);
    const byLabel = await engine.containers({ labels: [`com.docker.compose.project=${NAME}`, "com.docker.compose.service=hc"] });
    expect(byLabel.map((c) => c.service)).toEqual(["hc"]);
  });

  it("follows a healthcheck from starting to healthy", async () => {
    const hc = (await engine.containers({ project: NAME })).find((c) => c.service === "hc")!;
    expect(hc.health).toBe("starting");
    expect((await engine.inspect(hc.id)).State.Health.Status).toBe("starting");
    await dockerOk("exec", hc.id, "touch", "/tmp/ready");
    const healthy = await until(
      async () => (await engine.containers({ project: NAME })).find((c) => c.service === "hc" && c.health === "healthy"),
      { timeout: 10000, what: "the hc service to become healthy" },
    );
    expect(healthy.status).toContain("(healthy)");
  });

  it("reads health from the status text or the Health field", () => {
    expect(healthOf({ Status: "Up 3 seconds (health: starting)" })).toBe("starting");
    expect(healthOf({ Status: "Up 3 minutes (unhealthy)" })).toBe("unhealthy");
    expect(healthOf({ Status: "Exited (0) 2 seconds ago" })).toBeNull();
    expect(healthOf({ Status: "Up 1 second", Health: { Status: "healthy" } })).toBe("healthy");
  });

  it("inspect of a missing container is an EngineError 404 with the engine's message", async () => {
    const err = await engine.inspect("sundeck-no-such-container").catch((e) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err.status).toBe(404);
    expect(err.message).toMatch(/no such container/i);
  });
});

describe("engine: images", () => {
  it("knows which references exist locally, registry host, port, tag and digest included", async () => {
    await dockerOk("tag", TEST_IMAGES.busybox, REGISTRY_TAG);
    const id = await dockerOk("image", "inspect", "--format", "{{.Id}}", TEST_IMAGES.busybox);
    expect(await engine.imageExists(TEST_IMAGES.busybox)).toBe(true);
    expect(await engine.imageExists("sundeck-test/busybox")).toBe(true);
    expect(await engine.imageExists(REGISTRY_TAG)).toBe(true);
    expect(await engine.imageExists(id)).toBe(true);
    expect(await engine.imageExists("localhost:5000/sundeck-test/busybox:absent")).toBe(false);
    expect(await engine.imageExists("registry.example.com:5000/team/app:1.0")).toBe(false);
    expect(await engine.imageExists(`registry.example.com:5000/team/app@sha256:${"0".repeat(64)}`)).toBe(false);
    expect(await engine.imageExists("sundeck-test/never-built:latest")).toBe(false);
    expect(await engine.imageExists("Not A Valid/Ref?x=1#y")).toBe(false);
  });
});

describe("engine: networks", () => {
  const named = async (name: string) => {
    const out = await dockerOk("network", "ls", "--filter", `name=${name}`, "--format", "{{.Name}} {{.Driver}}");
    return out.split("\n").filter((l) => l.split(" ")[0] === name);
  };

  it("creates a bridge network once and is idempotent", async () => {
    const name = `${NAME}-net`;
    networks.push(name);
    await engine.ensureNetwork(name);
    await engine.ensureNetwork(name);
    expect(await named(name)).toEqual([`${name} bridge`]);
  });

  it("converges on one network when creators race, in this process and from separate clients", async () => {
    for (let round = 0; round < 3; round++) {
      const name = `${NAME}-race${round}`;
      networks.push(name);
      const clients = [engine, createEngine(), createEngine(), createEngine()];
      await Promise.all(clients.flatMap((c) => [c.ensureNetwork(name), c.ensureNetwork(name)]));
      expect(await named(name)).toEqual([`${name} bridge`]);
    }
  });
});

describe("engine: an engine that is not there", () => {
  it("a missing socket is DockerUnavailable with a clear message, quickly", async () => {
    const path = join(tempDir(), "docker.sock");
    const gone = createEngine({ socketPath: path });
    const t0 = Date.now();
    const err = await gone.containers().catch((e) => e);
    expect(err).toBeInstanceOf(DockerUnavailable);
    expect(err.message).toBe(`docker engine not reachable at ${path}: is dockerd running?`);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(await gone.ping()).toBe(false);
    expect(await gone.imageExists("x").catch((e) => e)).toBeInstanceOf(DockerUnavailable);
    expect(await gone.ensureNetwork("x").catch((e) => e)).toBeInstanceOf(DockerUnavailable);
    const drain = async (it: AsyncIterable<unknown>) => {
      for await (const _ of it) {
        // nothing arrives
      }
    };
    expect(await drain(gone.events({})).catch((e) => e)).toBeInstanceOf(DockerUnavailable);
    expect(await drain(gone.logs("abc", {})).catch((e) => e)).toBeInstanceOf(DockerUnavailable);
  });

  it("takes the socket from DOCKER_HOST, and a path that is no socket is refused the same way", async () => {
    const file = join(tempDir(), "not-a-socket");
    writeFileSync(file, "");
    const e = createEngine({ env: { DOCKER_HOST: `unix://${file}` } });
    const err = await e.version().catch((x) => x);
    expect(err).toBeInstanceOf(DockerUnavailable);
    expect(err.message).toBe(`docker engine not reachable at ${file}: is dockerd running?`);
  });

  it("an engine that accepts but never answers times out as DockerUnavailable", async () => {
    const path = join(tempDir(), "hung.sock");
    const server = Bun.listen({ unix: path, socket: { data() {} } });
    try {
      const hung = createEngine({ socketPath: path, timeoutMs: 300 });
      const t0 = Date.now();
      const err = await hung.containers().catch((x) => x);
      expect(err).toBeInstanceOf(DockerUnavailable);
      expect(err.message).toContain("did not answer within");
      expect(Date.now() - t0).toBeLessThan(2000);
    } finally {
      server.stop(true);
    }
  });

  it("speaks a newer engine's minimum API version, and an event stream the engine closes ends in DockerUnavailable", async () => {
    // a stand-in for behaviour the local engine cannot show: a Docker 29-style minimum API and a dropped stream
    const path = join(tempDir(), "newer.sock");
    const paths: string[] = [];
    const server = Bun.serve({
      unix: path,
      fetch(req) {
        const url = new URL(req.url);
        paths.push(url.pathname);
        if (url.pathname === "/version") return Response.json({ Version: "29.0.0", ApiVersion: "1.52", MinAPIVersion: "1.44" });
        if (url.pathname === "/v1.44/events") {
          const ev = (action: string) => `${JSON.stringify({ Type: "container", Action: action, Actor: { ID: "c1" } })}\n`;
          return new Response(ev("start") + ev("die"), { headers: { "content-type": "application/json" } });
        }
        return Response.json({ message: `client version too old for ${url.pathname}` }, { status: 400 });
      },
    });
    try {
      const newer = createEngine({ socketPath: path });
      const got: string[] = [];
      const err = await (async () => {
        for await (const ev of newer.events({})) got.push(`${ev.id}:${ev.action}`);
      })().catch((e) => e);
      expect(got).toEqual(["c1:start", "c1:die"]);
      expect(err).toBeInstanceOf(DockerUnavailable);
      expect(err.message).toContain("closed the event stream");
      expect(paths).toEqual(["/version", "/v1.44/events"]);
      const bad = await newer.containers().catch((e) => e);
      expect(bad).toBeInstanceOf(EngineError);
      expect(bad.message).toBe("client version too old for /v1.44/containers/json");
    } finally {
      server.stop(true);
    }
  });

  it("negotiates the API version: 1.41 unless the engine is older or no longer accepts it", () => {
    expect(negotiate("1.41", "1.47", "1.24")).toBe("1.41");
    expect(negotiate("1.41", "1.40", "1.12")).toBe("1.40");
    expect(negotiate("1.41", "1.52", "1.44")).toBe("1.44");
  });
});
