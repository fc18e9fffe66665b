/**
 * Catalog templates end to end on the real engine, their compose files deployed unchanged: the images they name
 * (postgres:16.6-alpine, mariadb:11.4.4 ... read from the catalog) are local look-alikes for the run
 * (scripts/test-template-images.ts: labelled sundeck.test-image=1, the catalog tags removed after the file). Each is
 * deployed through POST /api/templates/{id}/deploy with its batteries and becomes healthy by the template's own
 * healthcheck. The static site is routed by a quick test (<slug>.127.0.0.1.sslip.io, TLS local) and answers through
 * the proxy's HTTPS listener with a leaf of the local CA. Each database: the daily backup config and the app_down
 * rule the batteries made are there; data is written with the image's client, the config runs once, the data is
 * destroyed, the run's archive restored through the API, and the data reads back, and again after a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { catalogImage, type LookAlikeTemplate, useCatalogImages } from "../../../scripts/test-template-images";
import { startDockerServer, waitApp } from "../../helpers/apps";
import { restoreDone, serviceContainer } from "../../helpers/backups";
import { runSundeck } from "../../helpers/cli";
import { dockerOk, removeProject, requireDocker, uniqueName } from "../../helpers/docker";
import { type Reply, until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";
import { fetchTls } from "../../helpers/tls";
import { tempDir } from "../../helpers/tmp";

/** A database template's round trip: commands run by `sh -c` in its service (with the container's environment). */
interface DbCase {
  id: LookAlikeTemplate;
  service: string;
  strategy: string;
  seed: string;
  destroy: string;
  read: string;
  expected: string;
  /** What the archive (gunzipped) begins with. */
  head: RegExp;
}

const psql = (sql: string) => `psql -U "$POSTGRES_USER" -d "$POSTGRES_DB" -v ON_ERROR_STOP=1 -tAc "${sql}"`;
const maria = (sql: string) => `MYSQL_PWD="$MARIADB_PASSWORD" mariadb -u"$MARIADB_USER" -N "$MARIADB_DATABASE" -e "${sql}"`;
const mysql = (sql: string) => `MYSQL_PWD="$MYSQL_PASSWORD" mysql -u"$MYSQL_USER" -N "$MYSQL_DATABASE" -e "${sql}"`;
const SEED_SQL = "create table items(id int primary key, name varchar(40)); insert into items values (1, 'one'), (2, 'two')";
const READ_SQL = "select count(*), max(name) from items";
const redisLike = (cli: string, id: LookAlikeTemplate): DbCase => ({
  id,
  service: "cache",
  strategy: "redis",
  // REDISCLI_AUTH is in the service's environment (the template sets it for the healthcheck)
  seed: `${cli} set greeting hello >/dev/null && ${cli} rpush list a b c >/dev/null`,
  destroy: `${cli} flushall`,
  read: `${cli} get greeting; ${cli} llen list`,
  expected: "hello\n3",
  head: /^REDIS/,
});

const DATABASES: DbCase[] = [
  {
    id: "postgres",
    service: "db",
    strategy: "postgres",
    seed: psql(SEED_SQL),
    destroy: psql("drop table items"),
    read: psql(READ_SQL),
    expected: "2|two",
    head: /^PGDMP/,
  },
  {
    id: "mariadb",
    service: "db",
    strategy: "mysql",
    seed: maria(SEED_SQL),
    destroy: maria("drop table items"),
    read: maria(READ_SQL),
    expected: "2\ttwo",
    head: /^(\/\*M!999999\\- enable the sandbox mode \*\/\s*)?-- MariaDB dump/,
  },
  {
    id: "mysql",
    service: "db",
    strategy: "mysql",
    seed: mysql(SEED_SQL),
    destroy: mysql("drop table items"),
    read: mysql(READ_SQL),
    expected: "2\ttwo",
    head: /^(\/\*M!999999\\- enable the sandbox mode \*\/\s*)?-- (MariaDB|MySQL) dump/,
  },
  redisLike("redis-cli", "redis"),
  redisLike("valkey-cli", "valkey"),
];
const SITE = "static-site" as const;
const TEMPLATES: LookAlikeTemplate[] = [...DATABASES.map((d) => d.id), SITE];

const RUN = uniqueName("e2e").slice(-6);
const slugOf = (id: string) => `tple-${id}-${RUN}`.slice(0, 40).replace(/-+$/, "");
const projectOf = (id: string) => `sundeck-${slugOf(id)}`;
const CLI_SLUG = `tple-cli-${RUN}`;

let s: TestServer;
let images: { release(): Promise<void> } | null = null;
let proxyPort = 0;
let ca = "";
/** Each template's deploy answer, asked for in beforeAll so the deploys (healthchecks of 10 and 30 s) overlap. */
const deploys = new Map<string, Promise<Reply>>();

const execIn = async (id: string, service: string, script: string) =>
  dockerOk("exec", await serviceContainer(projectOf(id), service, { running: true }), "sh", "-c", script);

/** The app once its deploy succeeded and every container is running and healthy (by the template's healthcheck). */
const healthy = (slug: string) =>
  waitApp(
    s.root,
    slug,
    (a) =>
      a.last_deploy?.status === "succeeded" &&
      a.status === "running" &&
      a.services.every((x: any) => x.containers.length > 0 && x.containers.every((c: any) => c.health === "healthy")),
    120_000,
  );

beforeAll(async () => {
  await requireDocker();
  for (const id of TEMPLATES) await removeProject(projectOf(id), { volumes: true });
  images = await useCatalogImages(TEMPLATES);
  s = await startDockerServer(
    { tls: { mode: "local", email: "" } as any, http_listen_addr: "" },
    // the static site's healthcheck first runs 30 s after the start: the production window (60 s) with room
    { stabilizeMs: 90_000 },
  );
  proxyPort = s.ctx.edge.listeners()!.ports().main;
  ca = await (await fetch(`${s.url}/trust/ca.crt`)).text();
  expect((await s.root.put("/api/system/public-host", { public_host: "127.0.0.1" })).status).toBe(200);
  for (const d of DATABASES) {
    deploys.set(
      d.id,
      s.root.post(`/api/templates/${d.id}/deploy`, {
        slug: slugOf(d.id),
        routing: { mode: "none" },
        batteries: { backup: true, alert: true },
      }),
    );
  }
  const site = slugOf(SITE);
  deploys.set(
    SITE,
    // nothing in site/ yet: the template's placeholder page makes it answer (and healthy) as it is
    s.root.post(`/api/templates/${SITE}/deploy`, { slug: site, routing: { mode: "quick" }, batteries: { alert: true } }),
  );
  await Promise.all(deploys.values());
}, 120_000);

afterAll(async () => {
  await s?.stop();
  for (const id of TEMPLATES) await removeProject(projectOf(id), { volumes: true });
  await removeProject(`sundeck-${CLI_SLUG}`, { volumes: true });
  await images?.release();
}, 60_000);

describe("the catalog's images", () => {
  it("are this run's look-alikes under the catalog's own tags, labelled as test images", async () => {
    for (const id of TEMPLATES) {
      const ref = catalogImage(id);
      expect(ref).not.toContain("latest");
      const labels = JSON.parse(await dockerOk("image", "inspect", "--format", "{{json .Config.Labels}}", ref)) ?? {};
      // a developer's real image is used as is (and kept): only a look-alike must say what it stands for
      if (labels["sundeck.test-image"] === "1") expect(labels["sundeck.test-image.stands-for"]).toBe(ref);
    }
  });
});

describe("a static site from the template", () => {
  const slug = slugOf(SITE);
  const host = `${slug}.127.0.0.1.sslip.io`;

  it("deploys healthy with an app_down rule, and answers its quick-test host through the proxy over local TLS", async () => {
    const r = await deploys.get(SITE)!;
    expect(r.status).toBe(202);
    expect(r.json.batteries).toEqual({ alert_rule_id: expect.any(Number) });
    const app = await healthy(slug);
    expect(app.template).toEqual({ id: SITE, version: expect.any(Number) });
    expect(app.services.map((x: any) => x.image)).toEqual([catalogImage(SITE)]);
    expect(app.endpoints).toEqual([expect.objectContaining({ service: "web", hosts: [host], port: 80, tls: "local" })]);
    const rule = (await s.root.get(`/api/alerts/rules/${r.json.batteries.alert_rule_id}`)).json;
    expect(rule).toMatchObject({ kind: "app_down", app_slug: slug, enabled: true });
    // the route and its leaf (verified against the local CA alone) may trail the deploy by a reload
    const res = await until(
      async () => {
        const got = await fetchTls(proxyPort, host, "/", ca).catch(() => null);
        return got?.status === 200 ? got : null;
      },
      { timeout: 15_000, what: `${host} through the proxy` },
    );
    expect(await res.text()).toContain("<h1>It works</h1>");
    // what the template's notes say: the files go in site/ of the app's directory, and nginx serves them from there
    const dir = join(s.ctx.config.apps_dir, slug, "site");
    expect(readdirSync(dir)).toEqual(["index.html"]);
    writeFileSync(join(dir, "index.html"), `<h1>hello from ${slug}</h1>\n`);
    const mine = await fetchTls(proxyPort, host, "/", ca);
    expect(mine.status).toBe(200);
    expect(await mine.text()).toBe(`<h1>hello from ${slug}</h1>\n`);
  }, 150_000);
});

describe("sundeck templates deploy", () => {
  it("deploys the static site on a quick-test host, follows it to the end and prints the URL that answers", async () => {
    const started = Date.now();
    const r = await runSundeck(["templates", "deploy", SITE, "--name", CLI_SLUG, "--quick-test"], {
      url: s.url,
      key: s.keyFor("root").key,
      home: tempDir(),
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const url = `https://${CLI_SLUG}.127.0.0.1.sslip.io/`;
    expect(r.stdout).toContain(`deployed ${CLI_SLUG} from template ${SITE}: ${url}`);
    const res = await until(
      async () => {
        const got = await fetchTls(proxyPort, `${CLI_SLUG}.127.0.0.1.sslip.io`, "/", ca).catch(() => null);
        return got?.status === 200 ? got : null;
      },
      { timeout: 15_000, what: `${url} through the proxy` },
    );
    expect(await res.text()).toContain("<h1>It works</h1>");
    // the "under a minute", on this engine (the healthcheck's first run is 10 s after the start)
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);
});

describe.each(DATABASES)("the $id template", (d) => {
  const slug = slugOf(d.id);

  it("deploys healthy with a daily backup config and an app_down rule; the config runs once and its archive restores", async () => {
    const r = await deploys.get(d.id)!;
    expect(r.status).toBe(202);
    expect(r.json.batteries).toEqual({ backup_config_id: expect.any(Number), alert_rule_id: expect.any(Number) });
    const { backup_config_id: configId, alert_rule_id: ruleId } = r.json.batteries;
    const app = await healthy(slug);
    expect(app.template).toEqual({ id: d.id, version: expect.any(Number) });
    expect(app.services.map((x: any) => x.image)).toEqual([catalogImage(d.id)]);

    const configs = (await s.root.get(`/api/apps/${slug}/backups/configs`)).json;
    expect(configs).toEqual([
      expect.objectContaining({
        id: configId,
        strategy: d.strategy,
        service: d.service,
        schedule: "0 3 * * *",
        retention_count: 7,
        target: expect.objectContaining({ kind: "local" }),
      }),
    ]);
    expect((await s.root.get(`/api/alerts/rules/${ruleId}`)).json).toMatchObject({
      kind: "app_down",
      app_slug: slug,
      enabled: true,
    });

    await execIn(d.id, d.service, d.seed);
    expect(await execIn(d.id, d.service, d.read)).toBe(d.expected);
    const run = await s.root.post(`/api/backups/configs/${configId}/run`);
    expect(run.status).toBe(202);
    await s.ctx.backups.waitRun(configId);
    const done = (await s.root.get(`/api/apps/${slug}/backups/runs`)).json.find((x: any) => x.id === run.json.run_id);
    expect(done).toMatchObject({ status: "succeeded", target_kind: "local", error: null });
    const archive = await fetch(`${s.url}/api/backups/runs/${done.id}/download`, {
      headers: { authorization: `Bearer ${s.keyFor("root").key}` },
    });
    expect(archive.status).toBe(200);
    const bytes = new Uint8Array(await archive.arrayBuffer());
    expect(new Bun.CryptoHasher("sha256").update(bytes).digest("hex")).toBe(done.sha256);
    expect(new TextDecoder().decode(Bun.gunzipSync(bytes).subarray(0, 200))).toMatch(d.head);

    await execIn(d.id, d.service, d.destroy);
    expect(await execIn(d.id, d.service, d.read).catch((e) => String(e))).not.toBe(d.expected);
    const rs = await s.root.post(`/api/backups/runs/${done.id}/restore`);
    expect(rs.status).toBe(202);
    expect(await restoreDone(s, slug, rs.json.restore_id)).toMatchObject({ status: "succeeded", error: null });
    // a restore that stops the service (redis) starts it again: read once it answers
    const back = await until(() => execIn(d.id, d.service, d.read).catch(() => null), {
      timeout: 30_000,
      every: 250,
      what: `${d.id}'s data after the restore`,
    });
    expect(back).toBe(d.expected);
    // and it stays restored past a restart (Redis with appendonly loads its AOF: the restore wrote the RDB there too)
    await dockerOk("restart", "-t", "5", await serviceContainer(projectOf(d.id), d.service, { running: true }));
    const again = await until(() => execIn(d.id, d.service, d.read).catch(() => null), {
      timeout: 30_000,
      every: 250,
      what: `${d.id}'s data after a restart`,
    });
    expect(again).toBe(d.expected);
  }, 150_000);
});
