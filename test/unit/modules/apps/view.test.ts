/**
 * App views read what a version shows (services, routing) from its row: no view parses a compose file a deploy
 * already checked, a version from before those columns is checked once and gets them, and a refused version or a
 * file-only app is checked once per content, not per view.
 */
import { describe, expect, it } from "bun:test";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { parseAppLabels } from "../../../../src/compose/labels";
import { prepare } from "../../../../src/compose/prepare";
import { openDb } from "../../../../src/db";
import { createSecrets } from "../../../../src/lib/crypto";
import { createAppFiles } from "../../../../src/modules/apps/files";
import { createAppRepo } from "../../../../src/modules/apps/repo";
import type { StatusBoard } from "../../../../src/modules/apps/status";
import { createAppViews, serviceSummaries } from "../../../../src/modules/apps/view";
import { createDeployRepo } from "../../../../src/modules/deploys/repo";
import { tempDir } from "../../../helpers/tmp";

const NOW = "2026-12-02T00:00:00.000Z";

const COMPOSE = `services:
  web:
    image: nginx:1.27
    ports: ["8080:80"]
    labels:
      sundeck.domain: web.example.test
      sundeck.port: "80"
  worker:
    image: busybox
    deploy:
      replicas: 3
`;

function setup() {
  const dir = tempDir();
  const db = openDb(join(dir, "sundeck.db"));
  const apps = createAppRepo(db);
  const journal = createDeployRepo(db);
  const files = createAppFiles(join(dir, "apps"), join(dir, "data"));
  const secrets = createSecrets(randomBytes(32));
  const policy = { appDir: join(dir, "apps", "x"), appsDir: join(dir, "apps"), dataDir: join(dir, "data") };
  let checks = 0;
  const status = { containers: () => [], up: true } as unknown as StatusBoard;
  const views = createAppViews({
    repo: apps,
    journal,
    files,
    status,
    secrets,
    busy: () => false,
    prepare: (_slug, compose, env) => {
      checks++;
      return prepare(compose, env, policy);
    },
  });
  /** An app whose current version holds `compose`; `stored` keeps its routing and services as a deploy does. */
  const appWith = (slug: string, compose: string, stored: boolean) => {
    const app = apps.create(slug, NOW);
    const v = journal.insertVersion({
      appId: app.id,
      hash: `h-${slug}`,
      compose,
      envSealed: secrets.seal(""),
      source: "api",
      createdBy: "test",
      createdAt: NOW,
    });
    if (stored) {
      const p = prepare(compose, "", policy);
      journal.setVersionRouting(v.id, JSON.stringify(parseAppLabels(p.project)));
      journal.setVersionServices(v.id, JSON.stringify(serviceSummaries(p.project)));
    }
    return { app: apps.update(app.id, { currentVersionId: v.id }, NOW), version: v };
  };
  return { apps, journal, files, views, appWith, checks: () => checks };
}

describe("app views", () => {
  it("show a version's services and endpoints from its row, without checking its compose", () => {
    const t = setup();
    const { app } = t.appWith("shop", COMPOSE, true);
    const v = t.views.view(app);
    expect(t.checks()).toBe(0);
    expect(v.services.map((s) => [s.name, s.image, s.replicas, s.ports])).toEqual([
      ["web", "nginx:1.27", 1, ["127.0.0.1:8080:80/tcp"]],
      ["worker", "busybox", 3, []],
    ]);
    expect(v.services[0].scalable).toEqual({ ok: false, reason: "publishes host port 8080" });
    expect(v.services[1].scalable).toEqual({ ok: true });
    expect(v.endpoints).toEqual([{ service: "web", hosts: ["web.example.test"], port: 80, path: "/", tls: null }]);
    // the same as a check of the compose shows
    const fresh = setup();
    const old = fresh.appWith("shop", COMPOSE, false);
    expect(fresh.views.view(old.app)).toEqual(v);
    expect(fresh.checks()).toBe(1);
  });

  it("a scale set on the app wins over the declared replicas", () => {
    const t = setup();
    const { app } = t.appWith("shop", COMPOSE, true);
    const scaled = t.apps.update(app.id, { scaleJson: JSON.stringify({ worker: 5 }) }, NOW);
    expect(t.views.view(scaled).services[1].replicas).toBe(5);
  });

  it("check a version from before the columns once, and keep what it found with the version", () => {
    const t = setup();
    const { app, version } = t.appWith("old", COMPOSE, false);
    expect(t.journal.versionServices(version.id)).toBeNull();
    const first = t.views.view(app);
    t.views.view(app);
    t.views.routing(app);
    expect(t.checks()).toBe(1);
    expect(JSON.parse(t.journal.versionServices(version.id)!)).toHaveLength(2);
    expect(JSON.parse(t.journal.versionRouting(version.id)!).endpoints).toHaveLength(1);
    // a new process (no cache) reads the rows
    const views = createAppViews({
      repo: t.apps,
      journal: t.journal,
      files: t.files,
      status: { containers: () => [], up: true } as unknown as StatusBoard,
      secrets: createSecrets(randomBytes(32)),
      busy: () => false,
      prepare: () => {
        throw new Error("no check expected");
      },
    });
    expect(views.view(app)).toEqual(first);
  });

  it("a version that does not pass the checks shows nothing and is checked once", () => {
    const t = setup();
    const { app, version } = t.appWith("bad", "services:\n  web:\n    image: x\n    privileged: true\n", false);
    expect(t.views.view(app).services).toEqual([]);
    expect(t.views.view(app).endpoints).toEqual([]);
    expect(t.views.routing(app)).toBeNull();
    expect(t.checks()).toBe(1);
    expect(t.journal.versionServices(version.id)).toBeNull();
  });

  it("an app with files and no version is checked once per content of its files", () => {
    const t = setup();
    const app = t.apps.create("drop", NOW);
    t.files.write("drop", COMPOSE, "");
    expect(t.views.view(app).services).toHaveLength(2);
    t.views.view(app);
    expect(t.checks()).toBe(1);
    t.files.write("drop", COMPOSE.replace("replicas: 3", "replicas: 2"), "");
    expect(t.views.view(app).services[1].replicas).toBe(2);
    expect(t.checks()).toBe(2);
  });
});

describe("apps list", () => {
  it("shows each app's latest deploy, read for every app in one statement, as each view shows it", () => {
    const t = setup();
    const shop = t.appWith("shop", COMPOSE, true).app;
    const blog = t.appWith("blog", COMPOSE, true).app;
    const idle = t.appWith("idle", COMPOSE, true).app;
    for (const [app, action] of [
      [shop, "deploy"],
      [blog, "deploy"],
      [shop, "restart"],
    ] as const)
      t.journal.insertDeploy({ appId: app.id, versionId: null, action, source: "api", now: NOW });
    const list = t.views.list([shop, blog, idle]);
    expect(list.map((v) => [v.slug, v.last_deploy?.action ?? null])).toEqual([
      ["shop", "restart"],
      ["blog", "deploy"],
      ["idle", null],
    ]);
    expect(list).toEqual([shop, blog, idle].map((a) => t.views.view(a)));
  });
});
