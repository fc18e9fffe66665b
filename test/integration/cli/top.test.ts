/**
 * `sundeck top` against a real server with apps deployed on the real engine: every running container of every app,
 * grouped by app, with the newest metrics point the server stored for it (ticks recorded through the metrics service,
 * so the values are known); `--app` narrows, `--output json` is the snapshot, an unknown app is a one-line error. The
 * command runs from source in a child process, as a user would run it, with the key in the environment.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { resolve } from "node:path";
import { renderTop, type TopSnapshot, topSnapshot } from "../../../src/cli/top";
import { Api } from "../../../src/client/api";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { dockerOk, removeProject, uniqueName } from "../../helpers/docker";
import { until } from "../../helpers/http";
import { tickAt } from "../../helpers/metrics";
import { parseExposition, promtoolCheck } from "../../helpers/promtext";
import type { TestServer } from "../../helpers/server";
import { tempDir } from "../../helpers/tmp";

const SHOP = uniqueName("top-shop");
const BLOG = uniqueName("top-blog");
const MiB = 2 ** 20;
const sleeper = `    image: sundeck-test/busybox:latest
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    stop_grace_period: 1s
`;

let s: TestServer;
let key: string;
/** Full container ids by name, as the collector reports them. */
const ids = new Map<string, string>();

async function containersOf(slug: string): Promise<Array<{ name: string; service: string }>> {
  const out = await dockerOk(
    "ps",
    "--no-trunc",
    "--filter",
    `label=com.docker.compose.project=sundeck-${slug}`,
    "--format",
    '{{.ID}} {{.Names}} {{.Label "com.docker.compose.service"}}',
  );
  return out
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [id, name, service] = l.split(" ");
      ids.set(name, id);
      return { name, service };
    });
}

const MAIN = resolve(import.meta.dir, "../../../src/main.ts");
const env = () => {
  const home = tempDir();
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: home,
    SUNDECK_URL: s.url,
    SUNDECK_API_KEY: key,
  };
};

/** Run `sundeck top` from source with the server's URL and key in the environment. */
async function top(...args: string[]) {
  const p = Bun.spawn([process.execPath, MAIN, "top", ...args], {
    env: env(),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

beforeAll(async () => {
  await Promise.all([SHOP, BLOG].map((slug) => removeProject(`sundeck-${slug}`, { volumes: true })));
  // no collection timer: the test records the ticks it wants, then runs the real collector once at the end
  s = await startDockerServer({ metrics: { prometheus: true } as any }, { metricsEveryMs: 0 });
  await s.user("ops", "admin");
  key = s.keyFor("ops").key;
  const shop = `services:\n  web:\n${sleeper}  worker:\n${sleeper}    deploy:\n      resources:\n        limits:\n          memory: 256m\n`;
  for (const [slug, compose] of [
    [SHOP, shop],
    [BLOG, `services:\n  web:\n${sleeper}`],
  ]) {
    expect((await s.root.post("/api/apps/deploy", { slug, compose })).status).toBe(202);
  }
  await Promise.all([SHOP, BLOG].map((slug) => waitApp(s.root, slug, (a) => a.status === "running")));
  const shopC = await containersOf(SHOP);
  const blogC = await containersOf(BLOG);
  expect(shopC).toHaveLength(2);
  expect(blogC).toHaveLength(1);
  const now = Date.now();
  const sample = (app: string, c: { name: string; service: string }, over: Record<string, number | null>) => ({
    containerId: ids.get(c.name)!,
    name: c.name,
    app,
    service: c.service,
    ...over,
  });
  const worker = shopC.find((c) => c.service === "worker")!;
  const web = shopC.find((c) => c.service === "web")!;
  // an older tick with values, then a newer one where blog's container has none yet: top keeps the newest with values
  s.ctx.metrics.record(
    tickAt(now - 20_000, {
      containers: [sample(BLOG, blogC[0], { cpuPct: 5, memBytes: 32 * MiB, netRxBps: 100, netTxBps: 200 })],
      host: {},
    }),
  );
  s.ctx.metrics.record(
    tickAt(now, {
      containers: [
        sample(SHOP, web, {
          cpuPct: 12.5,
          memBytes: 512 * MiB,
          netRxBps: 2048,
          netTxBps: 1024,
          blkReadBps: 0,
          blkWriteBps: 4096,
        }),
        sample(SHOP, worker, { cpuPct: 99.5, cpuLimitPct: null, memBytes: 64 * MiB, memLimitBytes: 256 * MiB }),
        sample(BLOG, blogC[0], {}),
      ],
      host: { cpuPct: 30, load1: 1.5, memUsedBytes: 1024 * MiB, memTotalBytes: 4096 * MiB },
    }),
  );
}, 180_000);

afterAll(async () => {
  await s?.stop();
  await Promise.all([SHOP, BLOG].map((slug) => removeProject(`sundeck-${slug}`, { volumes: true })));
});

describe("sundeck top", () => {
  it("reads every running container by app with its newest measured point", async () => {
    const api = new Api({ url: s.url, apiKey: key, context: null, keyFrom: "test" });
    const snap: TopSnapshot = await topSnapshot(api);
    const mine = snap.containers.filter((r) => r.app === SHOP || r.app === BLOG);
    expect(mine.map((r) => [r.app, r.service])).toEqual(
      [
        [BLOG, "web"],
        [SHOP, "web"],
        [SHOP, "worker"],
      ].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
    );
    const by = (app: string, service: string) => mine.find((r) => r.app === app && r.service === service)!;
    // no limit: memory as a share of the host's
    expect(by(SHOP, "web")).toMatchObject({
      cpu_pct: 12.5,
      mem_bytes: 512 * MiB,
      mem_pct: 12.5,
      net_rx_bps: 2048,
      blk_write_bps: 4096,
    });
    // a limit: memory as a share of it
    expect(by(SHOP, "worker")).toMatchObject({ cpu_pct: 99.5, mem_limit_bytes: 256 * MiB, mem_pct: 25 });
    expect(by(BLOG, "web")).toMatchObject({ cpu_pct: 5, mem_bytes: 32 * MiB, net_tx_bps: 200 });
    expect(snap.host).toMatchObject({ cpu_pct: 30, load1: 1.5, mem_total_bytes: 4096 * MiB });
    const text = renderTop(snap);
    expect(text.split("\n")[0]).toBe("host: cpu 30.0%, mem 1.0GiB / 4.0GiB, load 1.50");
    expect(text).toMatch(/^APP\s+SERVICE\s+CONTAINER\s+CPU %\s+MEM\s+MEM %\s+NET RX \/ TX\s+BLOCK R \/ W$/m);
  });

  it("--once prints the table and exits 0; --app narrows; --output json is the snapshot", async () => {
    const once = await top("--once");
    expect(once.stderr).toBe("");
    expect(once.code).toBe(0);
    const row = once.stdout.split("\n").find((l) => l.startsWith(`${SHOP} `) && / worker /.test(l));
    expect(row).toMatch(/\s99\.5%\s+64MiB \/ 256MiB\s+25\.0%\s/);
    expect(once.stdout).toMatch(new RegExp(`^${BLOG}\\s+web\\s+\\S+\\s+5\\.0%\\s+32MiB\\s+`, "m"));

    const json = await top("--app", BLOG, "--output", "json");
    expect(json.code).toBe(0);
    const snap = JSON.parse(json.stdout) as TopSnapshot;
    expect(snap.containers.map((r) => r.app)).toEqual([BLOG]);
    expect(snap.containers[0]).toMatchObject({ service: "web", cpu_pct: 5, net_rx_bps: 100 });
  });

  it("an unknown app or a bad interval is a one-line error", async () => {
    const missing = await top("--once", "--app", "no-such-app");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`sundeck: no app named no-such-app on ${s.url}\n`);
    const bad = await top("--interval", "0");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--interval must be a whole number of seconds from 1 to 60");
  });

  it("on a terminal redraws in place every interval until Ctrl-C, then leaves the screen as it was (exit 0)", async () => {
    // script(1) gives the command a terminal; a ^C typed into it interrupts the command like a user's (exec: no
    // shell in between to die of the same ^C)
    const p = Bun.spawn(["script", "-qfec", `exec ${process.execPath} ${MAIN} top --interval 1`, "/dev/null"], {
      env: { ...env(), TERM: "xterm" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    void (async () => {
      for await (const chunk of p.stdout) out += new TextDecoder().decode(chunk);
    })();
    await until(() => out.split("sundeck top: every 1s").length > 2, { timeout: 15_000, what: "two frames" });
    p.stdin.write("\x03");
    await p.stdin.flush();
    expect(await p.exited).toBe(0);
    // the alternate screen is entered first and left last; each frame starts at home on a cleared screen
    expect(out.startsWith("\x1b[?1049h\x1b[?25l")).toBe(true);
    expect(out).toContain(`\x1b[H\x1b[Jsundeck top: every 1s`);
    expect(out).toContain(`${SHOP}  worker`);
    expect(out.trimEnd().endsWith("\x1b[?25h\x1b[?1049l")).toBe(true);
  });

  it("shows what the real collector measured once it has run", async () => {
    expect(await s.ctx.metrics.tick()).not.toBeNull();
    const api = new Api({ url: s.url, apiKey: key, context: null, keyFrom: "test" });
    const rows = (await topSnapshot(api, { app: SHOP })).containers;
    expect(rows).toHaveLength(2);
    // a sleeping busybox uses some memory and is under its 256 MiB limit
    for (const r of rows) expect(r.mem_bytes).toBeGreaterThan(0);
    expect(rows.find((r) => r.service === "worker")).toMatchObject({ mem_limit_bytes: 256 * MiB });
    // the same tick in the Prometheus exposition: a series per container, read back by the strict reader and promtool
    const metrics = await s.keyFor("ops", "scraper").get("/metrics");
    expect(metrics.status).toBe(200);
    expect(await promtoolCheck(metrics.text)).toBe("");
    const limits = parseExposition(metrics.text).get("sundeck_container_memory_limit_bytes")!;
    expect(limits.samples.filter((x) => x.labels.app === SHOP)).toEqual([
      {
        name: "sundeck_container_memory_limit_bytes",
        labels: { app: SHOP, service: "worker", container: rows.find((r) => r.service === "worker")!.container },
        value: 256 * MiB,
      },
    ]);
  });
});
