/**
 * Alerts end to end on the real engine: a container spinning a core fires a cpu rule (threshold 25 %, so a loaded
 * host still shows it), a local receiver gets the generic payload (its signature checked the way a receiver would),
 * the slack and the discord one; the rule resolves when the load stops; stopping the app fires app_down. Collection,
 * evaluation and delivery all run for real.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHmac } from "node:crypto";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { dockerOk, removeProject, uniqueName } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";

const SLUG = uniqueName("sdt-alerts");
const SECRET = "receiver-secret-0123456789";
const compose = `services:
  spin:
    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; while [ ! -f /tmp/calm ]; do :; done; while true; do sleep 1; done"]
    stop_grace_period: 1s
`;

interface Received {
  path: string;
  headers: Headers;
  body: string;
}
const received: Received[] = [];
let receiver: ReturnType<typeof Bun.serve>;
let s: TestServer;
const hooks: Record<string, number> = {};

beforeAll(async () => {
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      received.push({ path: new URL(req.url).pathname, headers: req.headers, body: await req.text() });
      return new Response("ok");
    },
  });
  await removeProject(`sundeck-${SLUG}`);
  // a receiver on this host needs the LAN setting; collection every second keeps the test short
  s = await startDockerServer({ webhooks: { allow_private_destinations: true } }, { metricsEveryMs: 1000 });
  for (const kind of ["generic", "slack", "discord"]) {
    const r = await s.root.post("/api/webhooks", {
      name: `${kind} receiver`,
      url: `http://127.0.0.1:${receiver.port}/${kind}`,
      kind,
      ...(kind === "generic" ? { secret: SECRET } : {}),
    });
    expect(r.status).toBe(201);
    hooks[kind] = r.json.id;
  }
  expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running");
}, 120_000);
afterAll(async () => {
  await s?.stop();
  receiver?.stop(true);
  await removeProject(`sundeck-${SLUG}`);
});

/** Generic payloads received so far, parsed, after checking each signature. */
const generic = () =>
  received
    .filter((r) => r.path === "/generic")
    .map((r) => {
      const ts = r.headers.get("x-sundeck-timestamp")!;
      const expected = `sha256=${createHmac("sha256", SECRET).update(`${ts}.${r.body}`).digest("hex")}`;
      expect(r.headers.get("x-sundeck-signature-256")).toBe(expected);
      expect(Math.abs(Date.now() / 1000 - Number(ts))).toBeLessThan(120);
      return JSON.parse(r.body);
    });
const find = (event: string, kind: string) => generic().find((p) => p.event === event && p.rule?.kind === kind);

describe("alerts on the real engine", () => {
  it("fires a cpu rule for a container spinning a core, to generic (signed), slack and discord receivers", async () => {
    const r = await s.root.post("/api/alerts/rules", {
      name: "spinning",
      app_slug: SLUG,
      kind: "cpu",
      threshold: 25,
      duration: "15s",
      webhook_ids: Object.values(hooks),
    });
    expect(r.status).toBe(201);
    const fired = await until(() => find("alert.firing", "cpu"), { timeout: 60_000, every: 250, what: "cpu firing" });
    expect(fired).toMatchObject({ state: "firing", app_slug: SLUG, rule: { name: "spinning", threshold: 25, duration: "15s" } });
    // a busy host shares its cores: the spinning shell gets what is left of one (a core here, half of one under load)
    expect(fired.value).toBeGreaterThanOrEqual(25);
    expect(fired.message).toStartWith(`cpu of ${SLUG}/spin-1 at `);
    await until(() => received.some((x) => x.path === "/slack") && received.some((x) => x.path === "/discord"), {
      timeout: 30_000,
      what: "slack and discord deliveries",
    });
    for (const path of ["/slack", "/discord"]) {
      const body = received.find((x) => x.path === path)!.body;
      expect(JSON.parse(body)).toBeObject();
      expect(body).toContain(`cpu of ${SLUG}/spin-1`);
    }
    const rule = (await s.root.get(`/api/alerts/rules/${r.json.id}`)).json;
    expect(rule.firing).toEqual([{ subject: `${SLUG}/spin-1`, since: expect.any(String), value: expect.any(Number) }]);
  }, 90_000);

  it("resolves when the load stops", async () => {
    const id = (await dockerOk("ps", "-q", "--filter", `label=com.docker.compose.project=sundeck-${SLUG}`)).trim();
    await dockerOk("exec", id, "touch", "/tmp/calm");
    const resolved = await until(() => find("alert.resolved", "cpu"), { timeout: 60_000, every: 250, what: "cpu resolved" });
    expect(resolved.message).toStartWith(`cpu of ${SLUG}/spin-1 back to `);
    const history = (await s.root.get(`/api/alerts/history?app=${SLUG}`)).json.entries.map((e: any) => e.state);
    expect(history).toEqual(["resolved", "firing"]);
  }, 90_000);

  it("fires app_down when the app is stopped", async () => {
    const r = await s.root.post("/api/alerts/rules", {
      name: "down",
      app_slug: SLUG,
      kind: "app_down",
      threshold: 0,
      duration: "0s",
      webhook_ids: [hooks.generic],
    });
    expect(r.status).toBe(201);
    expect((await s.root.post(`/api/apps/${SLUG}/stop`)).status).toBe(202);
    await waitApp(s.root, SLUG, (a) => a.status === "stopped" && a.last_deploy?.status === "succeeded");
    const down = await until(
      () => {
        // the timer kinds run every 15 s; judge them now instead of waiting for it
        s.ctx.alerts.evaluator.evaluateTimed();
        return find("alert.firing", "app_down");
      },
      { timeout: 30_000, every: 250, what: "app_down firing" },
    );
    expect(down.message).toBe(`app ${SLUG} is down: no running container`);
  }, 60_000);
});
