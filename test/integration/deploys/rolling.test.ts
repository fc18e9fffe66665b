/**
 * Rolling deploys on the real engine, under steady load through the proxy: redeploys of a routed service with one
 * and with two replicas fail no request; a new version that never gets ready fails none either, and the old
 * replicas keep serving; each fallback to compose's recreate is said in the deploy's record and log; a cancel
 * mid-rollout leaves the old version serving; a WebSocket on an old replica gets a clean close (1001) at the drain deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import { rawWs } from "../../helpers/rawws";
import type { TestServer } from "../../helpers/server";
import { openWs } from "../../helpers/ws";

const SLUG = "itest-roll";
const OTHER = "itest-roll-fallback";
const WS = "itest-roll-ws";
const HOST = "roll.test";
const WS_HOST = "ws.roll.test";

/**
 * A WebSocket server in busybox sh (nc runs it per connection): the handshake, then a text frame "tick" every 200 ms
 * until the connection goes; what the client sends is not read.
 */
const WS_SERVER = `key=""
while IFS= read -r line; do
  line=$(printf '%s' "$line" | tr -d '\\r')
  [ -z "$line" ] && break
  case "$line" in [Ss]ec-[Ww]eb[Ss]ocket-[Kk]ey:*) key=$(echo "\${line#*:}" | tr -d ' ') ;; esac
done
acc=$(printf '%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11' "$key" | sha1sum | cut -d' ' -f1 | xxd -r -p | base64)
printf 'HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: %s\\r\\n\\r\\n' "$acc"
while :; do printf '\\201\\004tick' || exit 0; sleep 0.2; done
`;
/** HTTP on 8080 (the first endpoint, the probe's) and the WebSocket server on 8081 (a second endpoint). */
const wsCompose = (v: number) => `services:
  ws:
    image: sundeck-test/web:latest
    command: ["sh", "-c", "printf '%s' \\"$$WS_SERVER\\" > /ws.sh; nc -ll -p 8081 -e sh /ws.sh & exec /entry.sh"]
    stop_grace_period: 1s
    environment:
      V: "${v}"
      WS_SERVER: |
${WS_SERVER.replaceAll("$", "$$$$")
  .split("\n")
  .map((l) => `        ${l}`)
  .join("\n")}
    labels:
      sundeck.endpoints.1.domain: http.${WS_HOST}
      sundeck.endpoints.1.port: "8080"
      sundeck.endpoints.2.domain: ${WS_HOST}
      sundeck.endpoints.2.port: "8081"
      sundeck.deploy.drain_timeout: 1s
`;

let s: TestServer;
let port: number;

/**
 * The web test image (answers its hostname on 8080); `v` changes the definition, `extra` adds service keys.
 * `delay` seconds pass before it listens (a slow start the probe must wait for).
 */
const compose = (v: number, o: { replicas?: number; extra?: string; delay?: number; labels?: string } = {}) => `services:
  web:
    image: sundeck-test/web:latest
    command: ["sh", "-c", "sleep ${o.delay ?? 0}; echo started $$(hostname); mkdir -p /www/cgi-bin; printf '#!/bin/sh\\nsleep 3\\nprintf \\"Content-Type: text/plain\\\\r\\\\n\\\\r\\\\n\\"\\nhostname\\n' > /www/cgi-bin/slow; chmod +x /www/cgi-bin/slow; exec /entry.sh"]
    stop_grace_period: 2s
    environment:
      V: "${v}"
${o.replicas ? `    deploy:\n      replicas: ${o.replicas}\n` : ""}${o.extra ?? ""}    labels:
      sundeck.domain: ${HOST}
      sundeck.port: "8080"
${o.labels ?? ""}`;

/** Requests from `clients` loops until stopped: how many were sent, failed (non-2xx or no answer), and who answered. */
function load(clients: number) {
  let stop = false;
  const stats = { sent: 0, failed: 0, failures: [] as string[], seen: new Set<string>() };
  const loops = Array.from({ length: clients }, async () => {
    while (!stop) {
      stats.sent++;
      try {
        const r = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: HOST }, signal: AbortSignal.timeout(5000) });
        const body = (await r.text()).trim();
        if (r.status !== 200) {
          stats.failed++;
          if (stats.failures.length < 5) stats.failures.push(`${r.status} ${body.slice(0, 80)}`);
        } else stats.seen.add(body);
      } catch (e) {
        stats.failed++;
        if (stats.failures.length < 5) stats.failures.push((e as Error).message);
      }
    }
  });
  return {
    stats,
    async end() {
      stop = true;
      await Promise.all(loops);
      return stats;
    },
  };
}

const deploy = async (slug: string, text: string) => {
  const r = await s.root.post("/api/apps/deploy", { slug, compose: text });
  expect(r.status).toBe(202);
  return r.json.deploy_id as number;
};
const record = async (slug: string, id: number) =>
  until(
    async () => {
      const d = (await s.root.get(`/api/apps/${slug}/deploys/${id}`)).json;
      return d?.status && d.status !== "running" ? d : null;
    },
    { timeout: 90_000, what: `deploy ${id} of ${slug} to end` },
  );
const answering = async () => {
  const r = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: HOST } });
  return r.status === 200 ? (await r.text()).trim() : null;
};

beforeAll(async () => {
  for (const slug of [SLUG, OTHER, WS]) await removeProject(`sundeck-${slug}`, { volumes: true });
  s = await startDockerServer({}, { stabilizeMs: 30_000 });
  port = s.ctx.edge.listeners()!.ports().main;
  await record(SLUG, await deploy(SLUG, compose(0)));
  await until(answering, { timeout: 10_000, what: "the first version to answer" });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  for (const slug of [SLUG, OTHER, WS]) await removeProject(`sundeck-${slug}`, { volumes: true });
}, 60_000);

describe("rolling deploys", () => {
  it("redeploys a routed service three times under load and fails no request", async () => {
    const l = load(8);
    for (let v = 1; v <= 3; v++) {
      const before = await answering();
      const d = await record(SLUG, await deploy(SLUG, compose(v)));
      expect(d.status).toBe("succeeded");
      expect(d.strategies.web.strategy).toBe("rolling");
      const after = await answering();
      expect(after).not.toBe(before);
    }
    const st = await l.end();
    expect(st.failures).toEqual([]);
    expect(st.failed).toBe(0);
    expect(st.sent).toBeGreaterThan(100);
    // one container serves (the old ones are gone), and the rollouts journal is empty
    const app = (await s.root.get(`/api/apps/${SLUG}`)).json;
    expect(app.services[0].containers.length).toBe(1);
    expect(s.ctx.db.sqlite.query("SELECT count(*) AS n FROM rollouts").get()).toEqual({ n: 0 });
  }, 240_000);

  it("keeps the app running (never failed) through a redeploy, and live logs follow the new replica", async () => {
    const logs = await openWs(s.url, `/api/apps/${SLUG}/logs?service=web&tail=0`, { cookie: s.root.cookie });
    const statuses = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        statuses.add((await s.root.get(`/api/apps/${SLUG}`)).json.status);
        await Bun.sleep(50);
      }
    })();
    const d = await record(SLUG, await deploy(SLUG, compose(5)));
    expect(d.status).toBe("succeeded");
    const now = await answering();
    sampling = false;
    await sampler;
    expect([...statuses].filter((x) => x !== "running" && x !== "deploying")).toEqual([]);
    // the stream stayed open past the old replica's removal and shows the new one's first line
    await logs.waitFor((fs) => fs.some((f: any) => f.line === `started ${now}`), 10_000);
    expect(logs.closed).toBeNull();
    logs.ws.close();
  }, 120_000);

  it("keeps two replicas through redeploys under load, with no failed request", async () => {
    await record(SLUG, await deploy(SLUG, compose(10, { replicas: 2 })));
    const l = load(8);
    for (let v = 11; v <= 12; v++)
      expect((await record(SLUG, await deploy(SLUG, compose(v, { replicas: 2 })))).status).toBe("succeeded");
    const st = await l.end();
    expect(st.failures).toEqual([]);
    const app = await waitApp(s.root, SLUG, (a) => a.services[0].containers.length === 2);
    expect(app.status).toBe("running");
  }, 240_000);

  it("waits for a slow new replica, and a version that never gets ready fails no request while the old one serves", async () => {
    await record(SLUG, await deploy(SLUG, compose(20)));
    const serving = await answering();
    const l = load(4);
    // a slow start: the port probe waits for it
    const slow = await record(SLUG, await deploy(SLUG, compose(21, { delay: 3 })));
    expect(slow.status).toBe("succeeded");
    const next = await answering();
    expect(next).not.toBe(serving);
    // a healthcheck that never passes: the new replica is removed, the old one keeps the traffic
    const broken = compose(22, {
      extra: '    healthcheck:\n      test: ["CMD", "false"]\n      interval: 1s\n      retries: 2\n',
    });
    const failed = await record(SLUG, await deploy(SLUG, broken));
    expect(failed.status).toBe("failed");
    expect(failed.error).toContain("unhealthy");
    const st = await l.end();
    expect(st.failures).toEqual([]);
    expect(await answering()).toBe(next);
  }, 240_000);

  it("lets requests in flight at the switch finish on the old replica (a GET is not retried elsewhere)", async () => {
    const serving = await answering();
    const slow = (method: string) =>
      fetch(`http://127.0.0.1:${port}/cgi-bin/slow`, {
        method,
        headers: { host: HOST },
        signal: AbortSignal.timeout(20_000),
      }).then(async (r) => ({ status: r.status, body: (await r.text()).trim(), at: Date.now() }));
    const started = Date.now();
    const inflight = [slow("GET"), slow("GET"), slow("POST")];
    await Bun.sleep(300);
    const d = await record(SLUG, await deploy(SLUG, compose(25)));
    expect(d.status).toBe("succeeded");
    for (const r of await Promise.all(inflight)) {
      expect(r.status).toBe(200);
      // answered by the replica that had it, once, in about the 3 s it takes
      expect(r.body).toBe(serving!);
      expect(r.at - started).toBeLessThan(6_000);
    }
    expect(await answering()).not.toBe(serving);
  }, 120_000);

  it("leaves the old version serving when a deploy is cancelled mid-rollout", async () => {
    const serving = await answering();
    const id = await deploy(SLUG, compose(30, { delay: 30 }));
    await until(
      async () => (s.ctx.db.sqlite.query("SELECT count(*) AS n FROM rollouts WHERE new_ids != '[]'").get() as any).n > 0,
      { timeout: 30_000, what: "the new replica to start" },
    );
    expect((await s.root.post(`/api/apps/${SLUG}/cancel`)).status).toBeLessThan(300);
    const d = await record(SLUG, id);
    expect(d.status).toBe("cancelled");
    expect(await answering()).toBe(serving);
    const app = await waitApp(s.root, SLUG, (a) => a.services[0].containers.length === 1);
    expect(app.services[0].containers.length).toBe(1);
  }, 120_000);

  it("closes a WebSocket on the old replica (on a second endpoint's port) with 1001 at the drain deadline", async () => {
    expect((await record(WS, await deploy(WS, wsCompose(0)))).status).toBe("succeeded");
    const old = await until(
      async () => {
        const c = await rawWs(port, "/", { host: WS_HOST }).catch(() => null);
        return c && (await until(() => c.frames.length > 0, { timeout: 3000, what: "a tick" }).catch(() => null)) ? c : null;
      },
      { timeout: 20_000, what: "the WebSocket service to answer" },
    );
    const d = await record(WS, await deploy(WS, wsCompose(1)));
    expect(d.status).toBe("succeeded");
    expect(d.strategies.ws.strategy).toBe("rolling");
    await until(() => old.ended, { timeout: 10_000, what: "the old tunnel to end" });
    // whole frames, then the Close: 1001 going away, never a cut mid-frame
    expect(old.closeCode).toBe(1001);
    const frames = old.frames.map((f) => `${f.opcode}:${f.payload.toString("latin1")}`);
    expect(frames.at(-1)).toBe("8:\x03\xe9");
    expect(new Set(frames.slice(0, -1))).toEqual(new Set(["1:tick"]));
    const fresh = await rawWs(port, "/", { host: WS_HOST });
    await until(() => fresh.frames.length > 0, { timeout: 5000, what: "a tick from the new replica" });
    fresh.destroy();
    const app = (await s.root.get(`/api/apps/${WS}`)).json;
    expect(app.services[0].containers.length).toBe(1);
  }, 120_000);
});

describe("restart, scale and a crash's leftovers take the same care", () => {
  it("restarts two replicas one at a time and scales down after draining, failing no request", async () => {
    expect((await record(SLUG, await deploy(SLUG, compose(40, { replicas: 2 })))).status).toBe("succeeded");
    const l = load(8);
    const r = await s.root.post(`/api/apps/${SLUG}/restart`);
    expect(r.status).toBe(202);
    expect((await record(SLUG, r.json.deploy_id)).status).toBe("succeeded");
    const sc = await s.root.post(`/api/apps/${SLUG}/scale`, { services: { web: 1 } });
    expect(sc.status).toBe(202);
    expect((await record(SLUG, sc.json.deploy_id)).status).toBe("succeeded");
    const st = await l.end();
    expect(st.failures).toEqual([]);
    expect(st.seen.size).toBeGreaterThanOrEqual(2);
    const app = await waitApp(s.root, SLUG, (a) => a.services[0].containers.length === 1);
    expect(app.status).toBe("running");
  }, 180_000);

  it("converges a rollout a crash left: on the new set after the switch, on the old one before", async () => {
    const sc = await s.root.post(`/api/apps/${SLUG}/scale`, { services: { web: 3 } });
    expect((await record(SLUG, sc.json.deploy_id)).status).toBe("succeeded");
    const cs = (await s.ctx.docker.engine!.containers({ project: `sundeck-${SLUG}` })).map((c) => c.id);
    expect(cs).toHaveLength(3);
    const [a, b, c] = cs;
    const row = (old: string[], fresh: string[], phase: string) =>
      s.ctx.db.sqlite.run(
        "INSERT INTO rollouts (slug, service, old_ids, new_ids, phase, created_at, updated_at) VALUES (?, 'web', ?, ?, ?, '', '')",
        [SLUG, JSON.stringify(old), JSON.stringify(fresh), phase],
      );
    // switched to b and c: a goes
    row([a], [b, c], "switched");
    await s.ctx.deployer.convergeRollouts();
    let left = (await s.ctx.docker.engine!.containers({ project: `sundeck-${SLUG}` })).map((x) => x.id);
    expect(left.sort()).toEqual([b, c].sort());
    // not switched, the old set being b: c (started for the rollout) goes
    row([b], [c], "starting");
    await s.ctx.deployer.convergeRollouts();
    left = (await s.ctx.docker.engine!.containers({ project: `sundeck-${SLUG}` })).map((x) => x.id);
    expect(left).toEqual([b]);
    expect(s.ctx.db.sqlite.query("SELECT count(*) AS n FROM rollouts").get()).toEqual({ n: 0 });
    await until(answering, { timeout: 10_000, what: "the survivor to answer" });
  }, 120_000);
});

describe("fallbacks to recreate", () => {
  it("says which strategy each service got and why", async () => {
    const text = `services:
  web:
    image: sundeck-test/web:latest
    container_name: ${OTHER}-web
    stop_grace_period: 1s
    labels:
      sundeck.domain: fallback.test
      sundeck.port: "8080"
  api:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    ports:
      - "18089:8080"
    labels:
      sundeck.domain: api.fallback.test
      sundeck.port: "8080"
  pinned:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    labels:
      sundeck.domain: pinned.fallback.test
      sundeck.port: "8080"
      sundeck.deploy.strategy: recreate
  worker:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
`;
    expect((await record(OTHER, await deploy(OTHER, text))).status).toBe("succeeded");
    const d = await record(OTHER, await deploy(OTHER, text.replaceAll("stop_grace_period: 1s", "stop_grace_period: 2s")));
    expect(d.status).toBe("succeeded");
    expect(d.strategies).toEqual({
      web: { strategy: "recreate", reason: expect.stringContaining("container_name") },
      api: { strategy: "recreate", reason: expect.stringContaining("host port") },
      pinned: { strategy: "recreate", reason: "sundeck.deploy.strategy is recreate" },
      worker: { strategy: "recreate", reason: expect.stringContaining("no endpoints") },
    });
  }, 120_000);
});
