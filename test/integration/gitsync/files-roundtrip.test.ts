/**
 * The git sync files layer on a real server with a running app: export through the API-made state into the real
 * apps_dir, commit it with the real git and scan the clone (only allowed files, no secret), then import an edited
 * sidecar as if pulled from the remote and see the change through the API, recorded with actor_source git_sync.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { gitSyncActor } from "../../../src/modules/gitsync/files/actor";
import { applyImport } from "../../../src/modules/gitsync/files/import-apply";
import { planImport } from "../../../src/modules/gitsync/files/import-plan";
import { readImport } from "../../../src/modules/gitsync/files/import-read";
import { listCommittable, scanTree } from "../../../src/modules/gitsync/files/paths";
import { writeExport } from "../../../src/modules/gitsync/files/write";
import { freePort, startDockerServer, waitApp, webCompose } from "../../helpers/apps";
import { removeProject } from "../../helpers/docker";
import { PASSWORD, type TestServer } from "../../helpers/server";
import { tempDir } from "../../helpers/tmp";

const SLUG = "itest-gitsync-files";
const S3_SECRET = "S3-SECRET-ROUNDTRIP-4e1d";
const ENV_FILE_SECRET = "APP-ENV-VALUE-IN-DOT-ENV";
let s: TestServer;
let appsDir: string;
let secrets: string[];

const git = (cwd: string, ...args: string[]) => {
  const r = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: cwd },
  });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
};

beforeAll(async () => {
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  s = await startDockerServer();
  appsDir = s.ctx.config.apps_dir;
  const port = await freePort();
  const deploy = await s.root.post("/api/apps/deploy", {
    slug: SLUG,
    compose: webCompose(port),
    env: { GREETING: ENV_FILE_SECRET },
  });
  expect(deploy.status).toBe(202);
  await waitApp(s.root, SLUG, (a) => a.status === "running");
  const post = async (path: string, body: unknown) => {
    const r = await s.root.post(path, body);
    expect({ path, status: r.status, text: r.status < 300 ? "" : r.text }).toEqual({
      path,
      status: r.status < 300 ? r.status : 201,
      text: "",
    });
    return r.json;
  };
  const hook = await post("/api/webhooks", {
    name: "ops",
    url: "https://hooks.example.com/T0/SECRETPATH",
    kind: "slack",
    secret: "WH-SECRET-77",
  });
  await post("/api/alerts/rules", {
    name: "down",
    kind: "app_down",
    threshold: 0,
    duration: "1m",
    app_slug: SLUG,
    webhook_ids: [hook.id],
  });
  await post("/api/alerts/rules", { name: "mem", kind: "memory", threshold: 90, duration: "5m", app_slug: SLUG });
  await post(`/api/apps/${SLUG}/backups/configs`, {
    strategy: "volume",
    service: "web",
    target: { kind: "local" },
    schedule: "0 2 * * *",
  });
  await post(`/api/apps/${SLUG}/backups/configs`, {
    strategy: "volume",
    service: "web",
    target: {
      kind: "s3",
      endpoint: "https://s3.example.com",
      bucket: "bk-1",
      prefix: "",
      region: "",
      access_key: "AK",
      secret_key: S3_SECRET,
    },
  });
  const carol = await post("/api/users", { username: "carol", password: PASSWORD, role: "viewer" });
  expect((await s.root.post(`/api/users/${carol.id}/access`, { app_slug: SLUG })).status).toBe(204);
  const hash = s.ctx.userRepo.byUsername("carol")!.passwordHash;
  secrets = [S3_SECRET, "WH-SECRET-77", "SECRETPATH", hash, PASSWORD];
});
afterAll(async () => {
  await s?.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
});

describe("export into the real apps_dir", () => {
  it("writes the sidecar without redeploying the app, and a second export changes nothing", async () => {
    const deploys = (await s.root.get(`/api/apps/${SLUG}/deploys`)).json.length;
    expect(writeExport(s.ctx, appsDir)).toEqual([".gitignore", "_global.yml", `${SLUG}/sundeck.yml`]);
    expect(writeExport(s.ctx, appsDir)).toEqual([]);
    const side = parse(readFileSync(join(appsDir, SLUG, "sundeck.yml"), "utf8"));
    expect(side.alert_rules.map((r: any) => [r.name, r.webhooks])).toEqual([
      ["down", ["ops"]],
      ["mem", []],
    ]);
    expect(side.access).toEqual([{ username: "carol", role: "viewer" }]);
    // the reconciler looks at the app's directory again: the compose and .env are the same, so no deploy
    await s.ctx.reconciler.ensure(SLUG);
    await s.ctx.reconciler.pass();
    expect((await s.root.get(`/api/apps/${SLUG}`)).json.status).toBe("running");
    expect((await s.root.get(`/api/apps/${SLUG}/deploys`)).json.length).toBe(deploys);
  });

  it("commits only allowed files: a clone holds nothing else and no secret but the app's own .env", () => {
    writeExport(s.ctx, appsDir);
    // what else lives in a real apps_dir: app data under the app's directory, stray files at the top
    writeFileSync(join(appsDir, SLUG, "data.db"), `SQLite ${S3_SECRET}`);
    writeFileSync(join(appsDir, "notes.txt"), PASSWORD);
    git(appsDir, "init", "-q", "-b", "main", ".");
    // stage exactly what the predicate admits (what the worker does), then check git's own view agrees
    git(appsDir, "add", "--", ...listCommittable(appsDir));
    expect(git(appsDir, "ls-files", "--others", "--exclude-standard").trim()).toBe("");
    git(appsDir, "commit", "-q", "-m", "export");
    const clone = tempDir();
    git(clone, "clone", "-q", appsDir, "c");
    const c = join(clone, "c");
    expect(scanTree(c)).toEqual([]);
    const files = git(c, "ls-files").trim().split("\n").sort();
    expect(files).toEqual([".gitignore", "_global.yml", `${SLUG}/.env`, `${SLUG}/docker-compose.yml`, `${SLUG}/sundeck.yml`]);
    for (const f of files) {
      const text = readFileSync(join(c, f), "latin1");
      for (const secret of secrets) expect({ f, secret, found: text.includes(secret) }).toEqual({ f, secret, found: false });
    }
    // the spec commits the app's .env as is: its values are the app's, not Sundeck's credentials
    expect(readFileSync(join(c, SLUG, ".env"), "utf8")).toContain(ENV_FILE_SECRET);
  });
});

describe("import of an edited sidecar", () => {
  it("applies the remote's change through the services, seen by the API and recorded as git_sync", async () => {
    writeExport(s.ctx, appsDir);
    const path = join(appsDir, SLUG, "sundeck.yml");
    const d = parse(readFileSync(path, "utf8"));
    d.alert_rules = d.alert_rules.filter((r: any) => r.name !== "down");
    d.alert_rules[0].threshold = 75;
    d.backups.find((b: any) => b.target.kind === "local").retention_count = 4;
    d.access = [];
    writeFileSync(path, stringify(d));

    const plan = planImport(s.ctx, readImport(appsDir));
    expect(plan.refused).toEqual([]);
    const result = applyImport(s.ctx, plan, gitSyncActor("dev@example.com"));
    expect(result.failed).toEqual([]);
    expect(result.applied.map((c) => c.summary).sort()).toEqual(
      [
        `remove alert rule down of ${SLUG}`,
        `change threshold of alert rule mem of ${SLUG}`,
        "change retention_count of backup config web volume (local)",
        `revoke carol's access to ${SLUG}`,
      ].sort(),
    );

    const rules = (await s.root.get("/api/alerts/rules")).json.filter((r: any) => r.app_slug === SLUG);
    expect(rules.map((r: any) => [r.name, r.threshold])).toEqual([["mem", 75]]);
    const configs = (await s.root.get(`/api/apps/${SLUG}/backups/configs`)).json;
    expect(configs.find((c: any) => c.target.kind === "local").retention_count).toBe(4);
    expect(configs.find((c: any) => c.target.kind === "s3").target.secret_key).toBe("********");
    const carol = (await s.root.get("/api/users")).json.find((u: any) => u.username === "carol");
    expect(carol.app_access).toEqual([]);

    const entries = (await s.root.get(`/api/activity?app=${SLUG}&limit=200`)).json.entries.filter(
      (e: any) => e.actor_source === "git_sync",
    );
    expect(entries.map((e: any) => e.action).sort()).toEqual(
      ["access_revoked", "alert_rule_removed", "alert_rule_updated", "config_updated"].sort(),
    );
    expect(entries.every((e: any) => e.actor_name === "dev@example.com")).toBe(true);

    // the state now is the file: the next export writes the same data and the plan is empty
    writeExport(s.ctx, appsDir);
    expect(parse(readFileSync(path, "utf8"))).toEqual(d);
    expect(planImport(s.ctx, readImport(appsDir))).toEqual({ changes: [], refused: [], deferred: [] });
    expect(writeExport(s.ctx, appsDir)).toEqual([]);
  });
});
