/**
 * The render of a template deploy on a real server with a real SQLite: who may call it, the exact texts a deploy
 * would use (routing labels in the compose file, generated secrets in the .env), the batteries it would make, and the
 * deploy's own refusals (409 naming a free slug, 400 for a backup of a template with no database, for a reviewed
 * compose file Sundeck refuses or that lost the database), with nothing written. The batteries themselves are made
 * through the backups and alerts services: normal configs, listed by their routes; one that cannot be made is named.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { parseEnvFile } from "../../../../src/compose/envfile";
import { makeBatteries, planBatteries } from "../../../../src/modules/templates/batteries";
import { catalog } from "../../../../src/modules/templates/catalog";
import type { Principal } from "../../../../src/shared/principal";
import { composeOf, seedApp } from "../../../helpers/backups";
import type { Client } from "../../../helpers/http";
import { startTestServer, type TestServer } from "../../../helpers/server";

let s: TestServer;
let viewer: Client;
const render = (c: Client, id: string, body: unknown) => c.post(`/api/templates/${id}/render`, body);

beforeAll(async () => {
  s = await startTestServer();
  viewer = await s.user("vera", "viewer", ["r-auth"]);
  await s.root.put("/api/system/public-host", { public_host: "203.0.113.7" });
});
afterAll(() => s?.stop());

describe("POST /api/templates/{id}/render", () => {
  it.each([
    ["anonymous: 401", () => s.anon, 401],
    ["a viewer of the slug: 403", () => viewer, 403],
    ["the super-admin: 200", () => s.root, 200],
  ] as const)("answers %s", async (_who, client, status) => {
    expect((await render(client(), "static-site", { slug: "r-auth" })).status).toBe(status);
  });

  it("returns the compose file with its routing labels and the .env with generated secrets, writing nothing", async () => {
    const body = { slug: "r-git", routing: { mode: "quick" } };
    const a = await render(s.root, "gitea", body);
    expect(a.status).toBe(200);
    expect(a.json.compose).toContain("sundeck.domain: r-git.203.0.113.7.sslip.io");
    expect(a.json.compose).toContain("sundeck.tls: local");
    expect(a.json.compose).toContain("POSTGRES_PASSWORD: $" + "{DB_PASSWORD}");
    const env = parseEnvFile(a.json.env);
    expect(env.DB_PASSWORD).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(a.json.compose).not.toContain(env.DB_PASSWORD);
    expect(a.json.batteries).toBeUndefined();
    // every render generates anew: a deploy without the reviewed env would too
    const b = await render(s.root, "gitea", body);
    expect(parseEnvFile(b.json.env).DB_PASSWORD).not.toBe(env.DB_PASSWORD);
    expect(existsSync(join(s.ctx.config.apps_dir, "r-git"))).toBe(false);
    expect((await s.root.get("/api/apps/r-git")).status).toBe(404);
  });

  it("describes the batteries a deploy would make", async () => {
    const r = await render(s.root, "gitea", { slug: "r-bat", batteries: { backup: true, alert: true } });
    expect(r.json.batteries).toEqual({
      backup: { strategy: "postgres", service: "db", target: { kind: "local" }, schedule: "0 3 * * *", retention_count: 7 },
      alert: { name: "r-bat down", app_slug: "r-bat", kind: "app_down", threshold: 0, duration: "5m", webhook_ids: [] },
    });
    const alertOnly = await render(s.root, "static-site", { slug: "r-bat", batteries: { alert: true, backup: false } });
    expect(alertOnly.status).toBe(200);
    expect(Object.keys(alertOnly.json.batteries)).toEqual(["alert"]);
  });

  it("refuses what the deploy refuses", async () => {
    const noDb = await render(s.root, "static-site", { slug: "r-no", batteries: { backup: true } });
    expect(noDb.status).toBe(400);
    expect(noDb.text).toBe(
      "Bad Request: batteries.backup: template static-site has no database to back up (back up its volumes from the Backups tab)",
    );
    const bad = await render(s.root, "gitea", { slug: "r-no", batteries: { backup: "yes" } });
    expect(bad.status).toBe(400);
    const missing = await render(s.root, "pgadmin", { slug: "r-no" });
    expect(missing.text).toContain("ADMIN_EMAIL (Sign-in email) is required");
    mkdirSync(join(s.ctx.config.apps_dir, "r-taken"), { recursive: true });
    const taken = await render(s.root, "static-site", { slug: "r-taken" });
    expect(taken.status).toBe(409);
    expect(taken.text).toBe('Conflict: app "r-taken" exists; "r-taken-2" is free');
  });
});

describe("a deploy's reviewed texts", () => {
  it("are checked before anything is deployed: Sundeck's rules, and the service the backup reads", async () => {
    const deploy = (body: Record<string, unknown>) => s.root.post("/api/templates/gitea/deploy", { slug: "r-rev", ...body });
    const unsafe = await deploy({ compose: "services:\n  web:\n    image: nginx:1.27.3-alpine\n    privileged: true\n" });
    expect(unsafe.status).toBe(400);
    expect(unsafe.text).toContain('service "web"');
    const lost = await deploy({ compose: composeOf("web"), batteries: { backup: true } });
    expect(lost.status).toBe(400);
    expect(lost.text).toBe(
      "Bad Request: batteries.backup: the compose file has no service db (the template's database) to back up",
    );
    expect((await s.root.get("/api/apps/r-rev")).status).toBe(404);
  });
});

describe("makeBatteries", () => {
  const root = (): Principal => {
    const u = s.ctx.userRepo.byUsername("root")!;
    return { user: { id: u.id, username: "root", role: "super_admin", tokenVersion: 0 }, via: "session", credential: "" };
  };
  const actor = { userId: null, name: "root", source: "api" as const, ip: null };

  it("makes a normal backup config and alert rule, listed by their routes", async () => {
    seedApp(s.ctx, "r-made", composeOf("web", "db"));
    const gitea = (await catalog()).get("gitea")!;
    const plan = planBatteries(gitea, "r-made", { backup: true, alert: true })!;
    const log = s.ctx.logs.logger("test");
    const made = makeBatteries({ backups: s.ctx.backups, alerts: s.ctx.alerts, log }, "r-made", plan, root(), actor);
    expect(made).toEqual({ backup_config_id: expect.any(Number), alert_rule_id: expect.any(Number) });
    const configs = (await s.root.get("/api/apps/r-made/backups/configs")).json;
    expect(configs).toEqual([
      expect.objectContaining({
        id: made.backup_config_id,
        strategy: "postgres",
        service: "db",
        target: { kind: "local" },
        schedule: "0 3 * * *",
        retention_count: 7,
        enabled: true,
      }),
    ]);
    const rules = (await s.root.get("/api/alerts/rules")).json;
    expect(rules.find((r: any) => r.id === made.alert_rule_id)).toMatchObject({
      name: "r-made down",
      app_slug: "r-made",
      kind: "app_down",
      duration: "5m",
      webhook_ids: [],
      enabled: true,
    });
  });

  it("names what it could not make, and makes the rest", async () => {
    seedApp(s.ctx, "r-half", composeOf("web"));
    const gitea = (await catalog()).get("gitea")!;
    const plan = planBatteries(gitea, "r-half", { backup: true, alert: true })!;
    const log = s.ctx.logs.logger("test");
    const made = makeBatteries({ backups: s.ctx.backups, alerts: s.ctx.alerts, log }, "r-half", plan, root(), actor);
    expect(made.backup_config_id).toBeUndefined();
    expect(made.alert_rule_id).toEqual(expect.any(Number));
    expect(made.failed).toEqual(["backup: service: the app has no service db"]);
  });
});
