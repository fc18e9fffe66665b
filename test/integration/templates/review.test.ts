/**
 * The wizard's path through the API on the real engine: a render gives the exact texts a deploy writes, a deploy of
 * the reviewed texts writes those and runs them (a compose file on the local test image, answering through the proxy),
 * and the batteries (a daily backup config of the template's database, an app_down alert rule) are normal configs
 * afterwards, listed by their routes and audited with the caller's name, whatever the deploy's outcome (the catalog's
 * images cannot be pulled here, so those deploys end at the pull). The CLI makes both by default for a template with
 * a database and says what it made; --no-backup and --no-alert leave them out.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { appActivity, freePort, startDockerServer, waitApp, waitSettled } from "../../helpers/apps";
import { runSundeck } from "../../helpers/cli";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";
import { tempDir } from "../../helpers/tmp";

let s: TestServer;
let proxyPort = 0;
const SLUGS = ["tpr-git", "tpr-web", "tpr-cli", "tpr-cli-off", "tpr-cli-alert", "tpr-cli-static"];

const fileOf = (slug: string, name: string) => readFileSync(join(s.ctx.config.apps_dir, slug, name), "utf8");
/** Wait until the deploy ended (it may fail at the pull: the catalog's images are not on this machine). */
const ended = (slug: string) => waitSettled(s.root, slug);
const configsOf = async (slug: string) => (await s.root.get(`/api/apps/${slug}/backups/configs`)).json;
const rulesOf = async (slug: string) => (await s.root.get("/api/alerts/rules")).json.filter((r: any) => r.app_slug === slug);

beforeAll(async () => {
  for (const slug of SLUGS) await removeProject(`sundeck-${slug}`, { volumes: true });
  proxyPort = await freePort();
  s = await startDockerServer({ listen_addr: `127.0.0.1:${proxyPort}` });
});
afterAll(async () => {
  await s?.stop();
  for (const slug of SLUGS) await removeProject(`sundeck-${slug}`, { volumes: true });
});

describe("render, review, deploy", () => {
  it("deploys the reviewed texts exactly, and makes the batteries as normal configs", async () => {
    const body = {
      slug: "tpr-git",
      routing: { mode: "domain", domain: "git.tpr.test", tls: "off" },
      batteries: { backup: true, alert: true },
    };
    const r = await s.root.post("/api/templates/gitea/render", body);
    expect(r.status).toBe(200);
    expect(r.json.compose).toContain("sundeck.domain: git.tpr.test");
    expect(r.json.env).toMatch(/^DB_PASSWORD=[A-Za-z0-9]{32}$/m);
    const env = `${r.json.env}# reviewed\n`;
    const d = await s.root.post("/api/templates/gitea/deploy", { ...body, compose: r.json.compose, env });
    expect(d.status).toBe(202);
    expect(d.json).toEqual({
      slug: "tpr-git",
      deploy_id: expect.any(Number),
      batteries: { backup_config_id: expect.any(Number), alert_rule_id: expect.any(Number) },
    });
    expect(fileOf("tpr-git", "docker-compose.yml")).toBe(r.json.compose);
    expect(fileOf("tpr-git", ".env")).toBe(env);
    const app = await ended("tpr-git");
    expect(app.template).toEqual({ id: "gitea", version: expect.any(Number) });
    // the deploy failed at the pull here: the configs stand, as made through their own routes
    expect(await configsOf("tpr-git")).toEqual([
      expect.objectContaining({
        id: d.json.batteries.backup_config_id,
        strategy: "postgres",
        service: "db",
        target: { kind: "local" },
        schedule: "0 3 * * *",
        retention_count: 7,
        enabled: true,
      }),
    ]);
    expect(await rulesOf("tpr-git")).toEqual([
      expect.objectContaining({ id: d.json.batteries.alert_rule_id, name: "tpr-git down", kind: "app_down", webhook_ids: [] }),
    ]);
    const made = (await appActivity(s.root, "tpr-git")).filter(
      (e) => e.action === "config_created" || e.action === "alert_rule_created",
    );
    expect(made.map((e) => [e.action, e.actor_name, e.actor_source]).sort()).toEqual([
      ["alert_rule_created", "root", "ui"],
      ["config_created", "root", "ui"],
    ]);
    // and they are edited and removed by their routes like any other
    expect((await s.root.del(`/api/backups/configs/${d.json.batteries.backup_config_id}`)).status).toBe(204);
    expect((await s.root.del(`/api/alerts/rules/${d.json.batteries.alert_rule_id}`)).status).toBe(204);
  });

  it("runs a reviewed compose file on the local image, routed through the proxy", async () => {
    const compose = `services:
  web:
    image: sundeck-test/web:latest
    environment:
      GREETING: \${GREETING}
    stop_grace_period: 1s
    labels:
      sundeck.domain: web.tpr.test
      sundeck.port: "8080"
`;
    const d = await s.root.post("/api/templates/static-site/deploy", { slug: "tpr-web", compose, env: "GREETING=reviewed\n" });
    expect(d.status).toBe(202);
    expect(d.json.batteries).toBeUndefined();
    const app = await waitApp(s.root, "tpr-web", (a) => a.status === "running");
    expect(app.template).toEqual({ id: "static-site", version: expect.any(Number) });
    expect(fileOf("tpr-web", ".env")).toBe("GREETING=reviewed\n");
    const page = await until(
      async () => {
        const res = await fetch(`http://127.0.0.1:${proxyPort}/`, { headers: { host: "web.tpr.test" } }).catch(() => null);
        return res?.status === 200 ? await res.text() : null;
      },
      { timeout: 30_000, what: "the reviewed app through the proxy" },
    );
    expect(page.trim()).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe("sundeck templates deploy", () => {
  const cli = (...args: string[]) =>
    runSundeck(["templates", "deploy", ...args, "--detach"], { url: s.url, key: s.keyFor("root").key, home: tempDir() });

  it("makes both batteries for a template with a database, and says so", async () => {
    const show = await runSundeck(["templates", "show", "redis"], { url: s.url, key: s.keyFor("root").key, home: tempDir() });
    expect(show.stdout).toContain("database: service cache, redis backups (daily on deploy)");
    const r = await cli("redis", "--name", "tpr-cli");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [config] = await configsOf("tpr-cli");
    const [rule] = await rulesOf("tpr-cli");
    expect(config).toMatchObject({ strategy: "redis", service: "cache", retention_count: 7 });
    expect(rule).toMatchObject({ kind: "app_down", app_slug: "tpr-cli" });
    expect(r.stdout).toContain(`made backup config ${config.id}: daily redis backup of service cache, kept 7 (local)`);
    expect(r.stdout).toContain(`made alert rule ${rule.id}: app_down`);
    await ended("tpr-cli");
  });

  it("leaves them out with --no-backup and --no-alert, and refuses --backup without a database", async () => {
    const off = await cli("redis", "--name", "tpr-cli-off", "--no-backup", "--no-alert");
    expect(off.code).toBe(0);
    expect(off.stdout).not.toContain("made");
    expect(await configsOf("tpr-cli-off")).toEqual([]);
    expect(await rulesOf("tpr-cli-off")).toEqual([]);
    const alertOnly = await cli("redis", "--name", "tpr-cli-alert", "--no-backup");
    expect(alertOnly.code).toBe(0);
    expect(await configsOf("tpr-cli-alert")).toEqual([]);
    expect(await rulesOf("tpr-cli-alert")).toHaveLength(1);
    // a template without a database makes none by default; asking for a backup is the server's 400
    const refused = await cli("static-site", "--name", "tpr-cli-static", "--backup");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("batteries.backup: template static-site has no database to back up");
    expect((await s.root.get("/api/apps/tpr-cli-static")).status).toBe(404);
    await ended("tpr-cli-off");
    await ended("tpr-cli-alert");
  });
});
