/**
 * PUT /api/apps/{slug}/endpoints on the real engine: a second domain added to a routed app answers through the proxy
 * after the deploy, the compose file keeps its comments and other labels as a new version, activity says what changed;
 * a bad entry or a rewrite the deploy rules refuse is a 400 that changes nothing; who may call it.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { appActivity, startDockerServer, waitApp } from "../../helpers/apps";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";

const SLUG = "itest-endpoints";
const COMPOSE = `# the site
services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    labels:
      # public name
      sundeck.domain: one.test
      sundeck.port: "8080"
      com.example.price: "$$5"
  side:
    image: sundeck-test/busybox:latest
    command: ["sleep", "3600"]
    network_mode: none
    stop_grace_period: 1s
`;

let s: TestServer;
let proxyPort: number;
const get = (host: string) => fetch(`http://127.0.0.1:${proxyPort}/`, { headers: { host } });
/** Wait until the host answers 200 through the proxy. */
const answers = (host: string) =>
  until(async () => ((await get(host)).status === 200 ? true : null), { timeout: 15_000, what: `${host} through the proxy` });
const files = () => {
  const dir = join(s.ctx.config.apps_dir, SLUG);
  return { compose: readFileSync(join(dir, "docker-compose.yml"), "utf8"), env: readFileSync(join(dir, ".env"), "utf8") };
};
const versions = async () => (await s.root.get(`/api/apps/${SLUG}/versions`)).json as any[];
const put = (body: unknown, c = s.root) => c.request("PUT", `/api/apps/${SLUG}/endpoints`, body);

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer();
  proxyPort = s.ctx.edge.listeners()!.ports().main;
  const r = await s.root.post("/api/apps/deploy", { slug: SLUG, compose: COMPOSE, env: { GREETING: "hi" } });
  expect(r.status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running");
  await answers("one.test");
});
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("PUT /api/apps/{slug}/endpoints", () => {
  it("adds a domain: a new version with the labels, deployed, both hosts answering through the proxy", async () => {
    const r = await put([
      { service: "web", domain: "one.test", port: 8080 },
      { service: "web", domain: "Two.Test", port: 8080, path: "/", tls: "off" },
    ]);
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ slug: SLUG, deploy_id: expect.any(Number) });
    const app = await waitApp(s.root, SLUG, (a) => a.current_version?.version === 2 && a.status === "running");
    expect(app.last_deploy).toMatchObject({ id: r.json.deploy_id, status: "succeeded" });
    expect(app.endpoints).toEqual([
      { service: "web", hosts: ["one.test"], port: 8080, path: "/", tls: null },
      { service: "web", hosts: ["two.test"], port: 8080, path: "/", tls: "off" },
    ]);
    await answers("one.test");
    await answers("two.test");
    // the file on disk and the kept version: the labels rewritten, the rest as written, the .env untouched
    const expected = COMPOSE.replace(
      'sundeck.domain: one.test\n      sundeck.port: "8080"',
      'sundeck.endpoints.1.domain: one.test\n      sundeck.endpoints.1.port: "8080"\n' +
        '      sundeck.endpoints.2.domain: two.test\n      sundeck.endpoints.2.port: "8080"\n      sundeck.endpoints.2.tls: "off"',
    );
    expect(files()).toEqual({ compose: expected, env: "GREETING=hi\n" });
    const [latest] = await versions();
    expect(latest).toMatchObject({ version: 2, current: true });
    expect((await s.root.get(`/api/apps/${SLUG}/versions/${latest.id}`)).json.compose).toBe(expected);
    // audited like any compose change
    const acts = await appActivity(s.root, SLUG);
    const changed = acts.find((e) => e.action === "endpoints_changed");
    expect(changed).toMatchObject({ category: "endpoint", compose_version_id: latest.id });
    expect(changed.summary).toContain("endpoint added: two.test → web:8080");
    expect(acts.find((e) => e.action === "compose_changed")).toMatchObject({ compose_version_id: latest.id });
  });

  it("deploys the same version again when the endpoints are the ones it has", async () => {
    const before = await versions();
    const r = await put([
      { service: "web", domain: "two.test", port: 8080, tls: "off" },
      { service: "web", domain: "one.test", port: 8080, path: null, tls: null },
    ]);
    expect(r.status).toBe(202);
    const app = await waitApp(s.root, SLUG, (a) => a.last_deploy?.id === r.json.deploy_id && a.last_deploy.status !== "running");
    expect(app.last_deploy.status).toBe("succeeded");
    expect(await versions()).toHaveLength(before.length);
  });

  it("answers 400 naming the entry, or the deploy rule, and changes nothing", async () => {
    const before = { files: files(), versions: (await versions()).length };
    const cases: Array<[unknown, string]> = [
      [[{ service: "db", domain: "x.test", port: 80 }], 'Bad Request: endpoints[0] ("db", "x.test"): no service "db" in the app'],
      [[{ service: "web", domain: "x.test", port: 0 }], "port must be a whole number in 1-65535"],
      [[{ service: "web", domain: "bad host", port: 80 }], "domain is not a valid host name"],
      [[{ service: "web", domain: "x.test", port: 80, path: "x" }], "path must start with /"],
      [[{ service: "web", domain: "x.test", port: 80, tls: "yes" }], "tls must be auto, custom, local or off"],
      [
        [
          { service: "web", domain: "x.test", port: 80 },
          { service: "web", domain: "x.test", port: 81 },
        ],
        "host x.test with path / is already endpoints[0]",
      ],
      // the deploy's own rules: a routed service may not set network_mode
      [[{ service: "side", domain: "x.test", port: 80 }], 'service "side": a service with a domain cannot set network_mode none'],
      [{ service: "web" }, "Bad Request:"],
    ];
    for (const [body, reason] of cases) {
      const r = await put(body);
      expect(r.status).toBe(400);
      expect(r.text).toContain(reason);
    }
    expect({ files: files(), versions: (await versions()).length }).toEqual(before);
  });

  it("needs the right to deploy the app; unknown and removed apps are 404", async () => {
    const viewer = await s.user("vic", "viewer", [SLUG]);
    const stranger = await s.user("max", "manage");
    const body = [{ service: "web", domain: "one.test", port: 8080 }];
    expect((await put(body, s.anon)).status).toBe(401);
    expect((await put(body, viewer)).status).toBe(403);
    expect((await put(body, stranger)).status).toBe(404);
    expect((await s.root.request("PUT", "/api/apps/no-such-app/endpoints", body)).status).toBe(404);
    expect((await s.root.request("DELETE", `/api/apps/${SLUG}`)).status).toBe(202);
    await until(async () => ((await s.root.get(`/api/apps/${SLUG}`)).status === 404 ? true : null), {
      timeout: 60_000,
      what: "the app to be removed",
    });
    expect((await put(body)).status).toBe(404);
  });
});
