/**
 * The proxy as the server runs it: apps reached by their labels, replicas balanced, a stopped app answered 503, the
 * management API on `domain`, request stats from real traffic; in `local` TLS mode, each host its own local-CA
 * certificate, a custom upload served, /trust and the CA download, and the plain listener's 308.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";
import { fetchTls, opensslCert, opensslVerify, sClient } from "../../helpers/tls";
import { tempDir } from "../../helpers/tmp";

const SLUG = "itest-edge";
const TLS_SLUG = "itest-edge-tls";

const routed = (host: string, extra = "") => `services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    labels:
      sundeck.domain: ${host}
      sundeck.port: "8080"${extra}
`;

describe("proxy over plain HTTP", () => {
  let s: TestServer;
  let port: number;
  const get = (host: string, path = "/") => fetch(`http://127.0.0.1:${port}${path}`, { headers: { host } });

  beforeAll(async () => {
    await removeProject(`sundeck-${SLUG}`, { volumes: true });
    s = await startDockerServer({ domain: "deck.test" });
    port = s.ctx.edge.listeners()!.ports().main;
    expect((await s.root.post("/api/apps/deploy", { slug: SLUG, compose: routed("blog.test") })).status).toBe(202);
    await waitApp(s.root, SLUG, (a) => a.status === "running");
  });
  afterAll(async () => {
    await s?.stop();
    await removeProject(`sundeck-${SLUG}`, { volumes: true });
  });

  it("routes a host to the app's service", async () => {
    const r = await until(
      async () => {
        const res = await get("blog.test");
        return res.status === 200 ? res : null;
      },
      { timeout: 10_000, what: "the route" },
    );
    expect(await r.text()).toMatch(/^[0-9a-f]{12}\n?$/);
  });

  it("balances replicas", async () => {
    expect((await s.root.post(`/api/apps/${SLUG}/scale`, { services: { web: 3 } })).status).toBe(202);
    await waitApp(s.root, SLUG, (a) => a.status === "running" && a.services[0].containers.length === 3);
    const seen = await until(
      async () => {
        const names = new Set<string>();
        for (let i = 0; i < 12; i++) names.add((await (await get("blog.test")).text()).trim());
        return names.size === 3 ? names : null;
      },
      { timeout: 10_000, what: "all three replicas to answer" },
    );
    expect(seen.size).toBe(3);
  });

  it("reports the proxy's ports and its connections against the caps in the server info", async () => {
    const info = (await s.root.get("/api/system/info")).json;
    expect(info).toMatchObject({ proxy_port: port, http_port: null, docker: "ok" });
    expect(info.proxy_connections).toMatchObject({ refused: 0, max: 4096, max_per_ip: 256 });
    expect(info.proxy_connections.open).toBeGreaterThanOrEqual(0);
  });

  it("answers unknown hosts 404 and serves the management API on the domain", async () => {
    expect((await get("nobody.test")).status).toBe(404);
    const health = await get("deck.test", "/api/health");
    expect(health.status).toBe(200);
    expect((await health.json()).status).toBe("ok");
    const me = await fetch(`http://127.0.0.1:${port}/api/me`, {
      headers: { host: "deck.test", cookie: `session=${s.root.cookie}` },
    });
    expect((await me.json()).username).toBe("root");
  });

  it("counts requests into request stats", async () => {
    for (let i = 0; i < 5; i++) await get("blog.test", `/posts/${i + 100}`);
    const r = await until(
      async () => {
        const stats = (await s.root.get(`/api/apps/${SLUG}/request-stats?range=1h`)).json;
        return stats.top_paths?.some((p: any) => p.path === "/posts/:id") ? stats : null;
      },
      { timeout: 20_000, what: "the stats to be flushed" },
    );
    expect(r.tier).toBe("raw");
    expect(r.step_ms).toBe(10_000);
    expect(r.requests).toBeGreaterThanOrEqual(5);
    expect(r.status_codes["404"]).toBeGreaterThanOrEqual(5);
    expect(r.p50_ms).toBeGreaterThan(0);
    expect((await s.root.get(`/api/apps/${SLUG}/request-stats?range=forever`)).status).toBe(400);
    expect((await s.root.get(`/api/apps/${SLUG}/request-stats?range=24h`)).json.tier).toBe("1m");
  });

  it("answers 503 while the app is stopped", async () => {
    expect((await s.root.post(`/api/apps/${SLUG}/stop`)).status).toBe(202);
    await waitApp(s.root, SLUG, (a) => a.status === "stopped");
    await until(async () => (await get("blog.test")).status === 503, { timeout: 10_000, what: "503" });
  });
});

describe("proxy with local TLS", () => {
  let s: TestServer;
  let main: number;
  let plain: number;
  let ca: string;

  beforeAll(async () => {
    await removeProject(`sundeck-${TLS_SLUG}`, { volumes: true });
    s = await startDockerServer({
      domain: "deck.test",
      tls: { mode: "local", email: "" } as any,
      http_listen_addr: "127.0.0.1:0",
    });
    ({ main, plain } = s.ctx.edge.listeners()!.ports() as { main: number; plain: number });
    const compose = `services:
  web:
    image: sundeck-test/web:latest
    stop_grace_period: 1s
    labels:
      sundeck.domain: app.test
      sundeck.port: "8080"
      sundeck.endpoints.2.domain: shop.test
      sundeck.endpoints.2.port: "8080"
      sundeck.endpoints.2.tls: custom
`;
    expect((await s.root.post("/api/apps/deploy", { slug: TLS_SLUG, compose })).status).toBe(202);
    await waitApp(s.root, TLS_SLUG, (a) => a.status === "running");
    ca = await (await fetch(`${s.url}/trust/ca.crt`)).text();
  });
  afterAll(async () => {
    await s?.stop();
    await removeProject(`sundeck-${TLS_SLUG}`, { volumes: true });
  });

  it("offers the trust page and the CA without a session", async () => {
    const page = await fetch(`${s.url}/trust`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Sundeck Local CA");
    expect(ca).toStartWith("-----BEGIN CERTIFICATE-----");
  });

  it("serves each host its own local-CA certificate", async () => {
    const app = await until(
      async () => {
        const seen = await sClient(main, "app.test");
        return seen.sans.includes("app.test") ? seen : null;
      },
      { timeout: 15_000, what: "the local leaf for app.test" },
    );
    expect(opensslVerify(app, ca, "app.test").ok).toBe(true);
    const mgmt = await until(
      async () => {
        const seen = await sClient(main, "deck.test");
        return seen.sans.includes("deck.test") ? seen : null;
      },
      { timeout: 15_000, what: "the local leaf for deck.test" },
    );
    expect(mgmt.fingerprint).not.toBe(app.fingerprint);
    const res = await fetchTls(main, "app.test", "/", ca);
    expect(res.status).toBe(200);
    expect(res.headers.get("strict-transport-security")).toStartWith("max-age=");
    expect((await fetchTls(main, "deck.test", "/api/health", ca)).status).toBe(200);
  });

  it("serves an uploaded certificate for a custom host, and refuses one whose key does not match", async () => {
    const dir = tempDir();
    const good = opensslCert(dir, { sans: ["shop.test"], days: 30 });
    const other = opensslCert(dir, { sans: ["shop.test"], days: 30 });
    const bad = await s.root.put(`/api/apps/${TLS_SLUG}/certs/shop.test`, { cert: good.cert, key: other.key });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("key does not match");
    const r = await s.root.put(`/api/apps/${TLS_SLUG}/certs/shop.test`, { cert: good.cert, key: good.key });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ domain: "shop.test", sans: ["shop.test"] });
    expect(Date.parse(r.json.not_after)).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    const served = await until(
      async () => {
        const seen = await sClient(main, "shop.test");
        return seen.fingerprint === new (await import("node:crypto")).X509Certificate(good.cert).fingerprint256 ? seen : null;
      },
      { timeout: 15_000, what: "the uploaded certificate to be served" },
    );
    expect(served.sans).toEqual(["shop.test"]);
    const list = (await s.root.get(`/api/apps/${TLS_SLUG}/certs`)).json;
    expect(list.find((c: any) => c.domain === "shop.test")).toMatchObject({
      mode: "custom",
      status: "issued",
      source: "custom",
      sans: ["shop.test"],
      fingerprint: r.json.fingerprint,
      subject: r.json.subject,
      not_before: r.json.not_before,
    });
    const entry = (await s.root.get(`/api/apps/${TLS_SLUG}/activity?categories=endpoint&limit=1`)).json.entries[0];
    expect(entry).toMatchObject({ action: "cert_uploaded", target: "shop.test" });
    expect(JSON.stringify((await s.root.get(`/api/activity/${entry.id}`)).json)).not.toContain("PRIVATE KEY");
    expect((await s.root.del(`/api/apps/${TLS_SLUG}/certs/shop.test`)).status).toBe(204);
    expect((await s.root.del(`/api/apps/${TLS_SLUG}/certs/shop.test`)).status).toBe(404);
  });

  it("refuses a certificate upload over 256 KiB", async () => {
    const r = await s.root.put(`/api/apps/${TLS_SLUG}/certs/shop.test`, { cert: "x".repeat(300 * 1024), key: "k" });
    expect(r.status).toBe(413);
  });

  it("redirects plain HTTP with 308, keeping path and query", async () => {
    const r = await fetch(`http://127.0.0.1:${plain}/a/b?c=d`, { headers: { host: "app.test" }, redirect: "manual" });
    expect(r.status).toBe(308);
    expect(r.headers.get("location")).toBe(`https://app.test:${main}/a/b?c=d`);
  });
});
