/**
 * The whole server in `auto` TLS mode against Debian's pebble: an app's domain gets a pebble certificate from the
 * configuration alone (HTTP-01 through the server's plain listener), the management API is served over TLS on
 * `domain`, and a management WebSocket stream works through the proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import { freePort, type Pebble, startPebble } from "../../helpers/pebble";
import type { TestServer } from "../../helpers/server";
import { fetchTls, opensslVerify, sClient } from "../../helpers/tls";
import { tempDir } from "../../helpers/tmp";

const SLUG = "itest-acme";
let s: TestServer;
let pebble: Pebble;
let tlsPort: number;

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  const httpPort = await freePort();
  tlsPort = await freePort();
  pebble = await startPebble({ httpPort, tlsPort });
  const caFile = join(tempDir(), "pebble-https-ca.pem");
  writeFileSync(caFile, pebble.httpsCa);
  s = await startDockerServer({
    domain: "deck.test",
    listen_addr: `127.0.0.1:${tlsPort}`,
    http_listen_addr: `127.0.0.1:${httpPort}`,
    tls: { mode: "auto", email: "ops@example.com", acme_directory: pebble.directoryUrl, acme_ca_file: caFile },
  });
  const compose = `services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    labels:
      sundeck.domain: blog.test
      sundeck.port: "8080"
`;
  expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose })).status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running");
});
afterAll(async () => {
  await s?.stop();
  await pebble?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("ACME from the configuration", () => {
  it("issues a pebble certificate for the app's domain and serves the app over it", async () => {
    const root = await pebble.root();
    const served = await until(
      async () => {
        const seen = await sClient(tlsPort, "blog.test");
        return opensslVerify(seen, root, "blog.test").ok ? seen : null;
      },
      { timeout: 30_000, what: "a pebble certificate for blog.test" },
    );
    expect(served.sans).toEqual(["blog.test"]);
    const certs = (await s.root.get(`/api/apps/${SLUG}/certs`)).json;
    expect(certs[0]).toMatchObject({ domain: "blog.test", mode: "auto", status: "issued", source: "acme" });
    const res = await fetchTls(tlsPort, "blog.test", "/", [root, ...served.chain.slice(1)]);
    expect(res.status).toBe(200);
  });

  it("serves the management API on its domain over TLS, WebSocket streams included", async () => {
    const root = await pebble.root();
    await until(async () => opensslVerify(await sClient(tlsPort, "deck.test"), root, "deck.test").ok, {
      timeout: 30_000,
      what: "a pebble certificate for deck.test",
    });
    const chain = (await sClient(tlsPort, "deck.test")).chain;
    const me = await fetchTls(tlsPort, "deck.test", "/api/me", [root, ...chain.slice(1)], {
      headers: { cookie: `session=${s.root.cookie}` },
    });
    expect((await me.json()).username).toBe("root");
    const frames: string[] = [];
    const ws = new WebSocket(`wss://127.0.0.1:${tlsPort}/api/system/process-logs/stream`, {
      headers: { host: "deck.test", origin: "https://deck.test", cookie: `session=${s.root.cookie}` },
      tls: { ca: [root, ...chain.slice(1)], serverName: "deck.test" },
    } as any);
    ws.onmessage = (e) => frames.push(JSON.parse(String(e.data)));
    await until(() => frames.some((l) => l.includes("proxy listening")), {
      timeout: 10_000,
      what: "process log lines through the proxy",
    });
    ws.close();
  });
});
