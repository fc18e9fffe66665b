/**
 * The Prometheus exposition: its text passes a strict reader and promtool with container, host, request, deploy and
 * alert series, label values escaped; and GET /metrics on a real server is a 404 while off, and once on is served
 * to API keys of admins only, from the real database and the proxy's request counters.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { RequestStats } from "../../../../src/modules/metrics/aggregator";
import { EXPOSITION_CONTENT_TYPE, escapeLabel, renderExposition } from "../../../../src/modules/metrics/prometheus";
import type { ContainerSample, Tick } from "../../../../src/modules/metrics/samples";
import { RequestTotals } from "../../../../src/modules/metrics/totals";
import { FakeClock } from "../../../helpers/clock";
import { parseExposition, promtoolCheck } from "../../../helpers/promtext";
import { startTestServer, type TestServer } from "../../../helpers/server";

const T = Date.parse("2026-11-22T12:00:00Z");

const container = (over: Partial<ContainerSample>): ContainerSample => ({
  t: T,
  containerId: "c0",
  name: "blog-web-1",
  app: "blog",
  service: "web",
  running: true,
  cpuPct: 50,
  cpuLimitPct: null,
  memBytes: 64 * 2 ** 20,
  memLimitBytes: null,
  netRxBps: 1000,
  netTxBps: 2000,
  blkReadBps: 0,
  blkWriteBps: 4096,
  restarts: 0,
  ...over,
});

const tick: Tick = {
  t: T,
  containers: [
    container({}),
    container({ containerId: "c1", name: "blog-web-2", cpuPct: 200, cpuLimitPct: 100, memLimitBytes: 2 ** 30, restarts: 3 }),
    // a first tick has no rates yet: those series are left out, not zero
    container({ containerId: "c2", app: 'we"ird\\app', service: "line\nbreak", name: "odd-1", netRxBps: null, cpuPct: null }),
  ],
  host: {
    t: T,
    cpuPct: 25,
    load1: 0.5,
    load5: 0.25,
    load15: 0.125,
    memUsedBytes: 2 ** 30,
    memTotalBytes: 4 * 2 ** 30,
    swapUsedBytes: 0,
    swapTotalBytes: 2 ** 30,
    diskFreeBytes: 10e9,
    diskTotalBytes: 50e9,
    dockerDiskFreeBytes: 20e9,
    dockerDiskTotalBytes: 100e9,
    netRxBps: 5000,
    netTxBps: 6000,
  },
};

const value = (fams: ReturnType<typeof parseExposition>, name: string, labels: Record<string, string> = {}) => {
  for (const f of fams.values())
    for (const s of f.samples) if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
  return undefined;
};

describe("the exposition text", () => {
  const totals = new RequestTotals();
  for (const [status, ms] of [
    [200, 3],
    [200, 40],
    [404, 120],
    [502, 30_000],
    [200, 90_000],
  ] as const)
    totals.record("blog", status, ms, 100);
  const text = renderExposition({
    tick,
    requests: totals.entries(),
    deploys: [
      { app: "blog", status: "succeeded", count: 4 },
      { app: "blog", status: "failed", count: 1 },
    ],
    apps: 2,
    alerts: [{ ruleId: 7, rule: 'cpu "hot"', kind: "cpu", app: "blog", subject: "blog-web-2" }],
    version: "1.2.3",
  });

  it("passes the strict reader and promtool's parser and linter", async () => {
    parseExposition(text);
    expect(await promtoolCheck(text)).toBe("");
  });

  it("gives container series in base units, labelled by app, service and container, escaping label values", () => {
    const f = parseExposition(text);
    const web2 = { app: "blog", service: "web", container: "blog-web-2" };
    expect(value(f, "sundeck_container_cpu_usage_ratio", web2)).toBe(2);
    expect(value(f, "sundeck_container_cpu_limit_usage_ratio", web2)).toBe(1);
    expect(value(f, "sundeck_container_memory_limit_bytes", web2)).toBe(2 ** 30);
    expect(value(f, "sundeck_container_restarts_total", web2)).toBe(3);
    expect(value(f, "sundeck_container_memory_usage_bytes", { container: "blog-web-1" })).toBe(64 * 2 ** 20);
    expect(value(f, "sundeck_container_block_write_bytes_per_second", { container: "blog-web-1" })).toBe(4096);
    // the odd labels come back intact through the escapes
    const odd = { app: 'we"ird\\app', service: "line\nbreak", container: "odd-1" };
    expect(value(f, "sundeck_container_memory_usage_bytes", odd)).toBe(64 * 2 ** 20);
    expect(value(f, "sundeck_container_network_receive_bytes_per_second", odd)).toBeUndefined();
    expect(value(f, "sundeck_container_cpu_usage_ratio", odd)).toBeUndefined();
    expect(text).toContain('app="we\\"ird\\\\app",service="line\\nbreak"');
    expect(escapeLabel('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
  });

  it("gives the host: CPU, load, memory, swap, both disks and network", () => {
    const f = parseExposition(text);
    expect(value(f, "sundeck_host_cpu_usage_ratio")).toBe(0.25);
    expect(value(f, "sundeck_host_load15")).toBe(0.125);
    expect(value(f, "sundeck_host_memory_total_bytes")).toBe(4 * 2 ** 30);
    expect(value(f, "sundeck_host_swap_total_bytes")).toBe(2 ** 30);
    expect(value(f, "sundeck_host_disk_free_bytes", { mount: "data" })).toBe(10e9);
    expect(value(f, "sundeck_host_disk_total_bytes", { mount: "docker" })).toBe(100e9);
    expect(value(f, "sundeck_host_network_transmit_bytes_per_second")).toBe(6000);
    expect(value(f, "sundeck_metrics_last_collection_timestamp_seconds")).toBe(T / 1000);
  });

  it("gives requests by status class and a cumulative latency histogram in seconds", () => {
    const f = parseExposition(text);
    expect(value(f, "sundeck_http_requests_total", { app: "blog", class: "2xx" })).toBe(3);
    expect(value(f, "sundeck_http_requests_total", { app: "blog", class: "4xx" })).toBe(1);
    expect(value(f, "sundeck_http_requests_total", { app: "blog", class: "5xx" })).toBe(1);
    expect(value(f, "sundeck_http_request_duration_seconds_bucket", { app: "blog", le: "0.005" })).toBe(1);
    expect(value(f, "sundeck_http_request_duration_seconds_bucket", { app: "blog", le: "0.05" })).toBe(2);
    expect(value(f, "sundeck_http_request_duration_seconds_bucket", { app: "blog", le: "30" })).toBe(4);
    expect(value(f, "sundeck_http_request_duration_seconds_bucket", { app: "blog", le: "60" })).toBe(4);
    expect(value(f, "sundeck_http_request_duration_seconds_bucket", { app: "blog", le: "+Inf" })).toBe(5);
    expect(value(f, "sundeck_http_request_duration_seconds_count", { app: "blog" })).toBe(5);
    expect(value(f, "sundeck_http_request_duration_seconds_sum", { app: "blog" })).toBeCloseTo(120.163, 6);
    expect(value(f, "sundeck_http_response_bytes_total", { app: "blog" })).toBe(500);
  });

  it("gives deploys per app and status, the app count and firing alerts", () => {
    const f = parseExposition(text);
    expect(value(f, "sundeck_deploys_total", { app: "blog", status: "succeeded" })).toBe(4);
    expect(value(f, "sundeck_apps")).toBe(2);
    expect(value(f, "sundeck_alerts_firing", { rule: 'cpu "hot"', kind: "cpu", rule_id: "7", subject: "blog-web-2" })).toBe(1);
    expect(value(f, "sundeck_build_info", { version: "1.2.3" })).toBe(1);
  });

  it("before the first collection has no container or host series, and still reads as valid", async () => {
    const empty = renderExposition({ tick: null, requests: [], deploys: [], apps: 0, alerts: [], version: "dev" });
    const f = parseExposition(empty);
    expect([...f.keys()].sort()).toEqual(["sundeck_apps", "sundeck_build_info"]);
    expect(await promtoolCheck(empty)).toBe("");
  });

  it("the strict reader refuses what a scraper would", () => {
    const bad = [
      "x 1\n",
      "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na 2\n",
      "# TYPE a gauge\n# TYPE a gauge\na 1\n",
      "# TYPE a gauge\na 1\na 1\n",
      '# TYPE a gauge\na{l="x\\t"} 1\n',
      "# TYPE a counter\na 1\n",
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n',
      "# TYPE a gauge\na 1",
    ];
    for (const b of bad) expect(() => parseExposition(b)).toThrow();
  });
});

describe("request counters since start", () => {
  it("the aggregator counts every recorded request in its totals, which draining does not reset", () => {
    const agg = new RequestStats();
    agg.record("blog", { status: 200, ms: 12, path: "/", bytes: 10 });
    agg.record("blog", { status: 503, ms: 7, path: "/x" });
    agg.drain({ all: true });
    agg.record("shop", { status: 301, ms: 1, path: "/" });
    const totals = Object.fromEntries(
      [...agg.totals.entries()].map(([app, t]) => [app, { count: t.count, bytes: t.bytes, classes: [...t.classes] }]),
    );
    expect(totals).toEqual({
      blog: { count: 2, bytes: 10, classes: [0, 1, 0, 0, 1] },
      shop: { count: 1, bytes: 0, classes: [0, 0, 1, 0, 0] },
    });
  });
});

describe("GET /metrics", () => {
  let off: TestServer;
  let on: TestServer;
  const clock = new FakeClock(Date.now());

  beforeAll(async () => {
    [off, on] = await Promise.all([
      startTestServer({}, { timings: { metricsEveryMs: 0 } }),
      startTestServer({ metrics: { prometheus: true } as any }, { clock, timings: { metricsEveryMs: 0 } }),
    ]);
    for (const s of [off, on]) {
      await s.user("ada", "admin");
      await s.user("vic", "viewer");
    }
  });
  afterAll(async () => {
    await Promise.all([off?.stop(), on?.stop()]);
  });

  it("is a plain 404 while metrics.prometheus is off, whoever asks", async () => {
    for (const c of [off.anon, off.root, off.keyFor("ada")]) {
      const r = await c.get("/metrics");
      expect(r.status).toBe(404);
      expect(r.text).toBe("Not Found");
    }
  });

  it("once on, wants an API key of an admin: 401 anonymous, 403 a session or a viewer's key", async () => {
    expect((await on.anon.get("/metrics")).status).toBe(401);
    expect((await on.root.get("/metrics")).status).toBe(403);
    expect((await on.keyFor("vic").get("/metrics")).status).toBe(403);
    const r = await on.keyFor("ada").get("/metrics");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe(EXPOSITION_CONTENT_TYPE);
    parseExposition(r.text);
  });

  it("serves deploys, apps and firing alerts from the database and the proxy's request counters", async () => {
    const sql = on.ctx.db.sqlite;
    const now = new Date().toISOString();
    const app = sql.query("INSERT INTO apps (slug, created_at, updated_at) VALUES ('blog', ?1, ?1) RETURNING id").get(now) as {
      id: number;
    };
    for (const status of ["succeeded", "succeeded", "failed"])
      sql.run("INSERT INTO deploys (app_id, action, status, source, started_at) VALUES (?, 'up', ?, 'cli', ?)", [
        app.id,
        status,
        now,
      ]);
    const rule = sql
      .query(
        `INSERT INTO alert_rules (name, app_slug, kind, threshold, duration, webhook_ids, enabled, created_at, updated_at)
         VALUES ('blog down', 'blog', 'app_down', 0, '1m', '[]', 1, ?1, ?1) RETURNING id`,
      )
      .get(now) as { id: number };
    sql.run("INSERT INTO alert_state (rule_id, subject, state, since) VALUES (?, 'blog', 'firing', ?)", [rule.id, now]);
    on.ctx.edge.totals().record("blog", 200, 15, 42);
    // database figures are reused for 5 s between scrapes
    clock.advance(5000);

    const r = await on.keyFor("ada", "scraper").get("/metrics");
    expect(r.status).toBe(200);
    const f = parseExposition(r.text);
    expect(await promtoolCheck(r.text)).toBe("");
    expect(value(f, "sundeck_apps")).toBe(1);
    expect(value(f, "sundeck_deploys_total", { app: "blog", status: "succeeded" })).toBe(2);
    expect(value(f, "sundeck_deploys_total", { app: "blog", status: "failed" })).toBe(1);
    expect(value(f, "sundeck_alerts_firing", { app: "blog", kind: "app_down", rule: "blog down", subject: "blog" })).toBe(1);
    expect(value(f, "sundeck_http_requests_total", { app: "blog", class: "2xx" })).toBe(1);
    expect(value(f, "sundeck_http_request_duration_seconds_count", { app: "blog" })).toBe(1);
  });
});
