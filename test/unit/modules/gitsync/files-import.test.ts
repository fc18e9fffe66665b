/**
 * Import of the git sync files: strict reading (unknown keys, limits, links, hostile YAML refused with the file and
 * key named), the plan against a real server's state (what the remote may change, and what is refused), and the
 * apply through the services with actor_source git_sync.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { gitSyncActor } from "../../../../src/modules/gitsync/files/actor";
import { applyImport } from "../../../../src/modules/gitsync/files/import-apply";
import { planImport } from "../../../../src/modules/gitsync/files/import-plan";
import { ImportRefused, readImport } from "../../../../src/modules/gitsync/files/import-read";
import { writeExport } from "../../../../src/modules/gitsync/files/write";
import { startTestServer, type TestServer } from "../../../helpers/server";
import { tempDir } from "../../../helpers/tmp";
import { plantState } from "./files-fixture";

const SIDE = { version: 1, alert_rules: [], backups: [], access: [] };
const RULE = { name: "r", kind: "cpu", threshold: 50, duration: "1m" };

/** A tree with the given files (objects are written as YAML). */
function tree(files: Record<string, unknown>): string {
  const dir = tempDir();
  for (const [p, v] of Object.entries(files)) {
    mkdirSync(join(dir, p, ".."), { recursive: true });
    writeFileSync(join(dir, p), typeof v === "string" ? v : stringify(v));
  }
  return dir;
}

/** The problems readImport names for `files`, or [] when it reads them. */
function problems(files: Record<string, unknown>): string[] {
  try {
    readImport(tree(files));
    return [];
  } catch (e) {
    if (!(e instanceof ImportRefused)) throw e;
    return e.problems;
  }
}

describe("readImport", () => {
  it("reads sidecars and _global.yml; an app without a sidecar is absent", () => {
    const dir = tree({
      "web/sundeck.yml": SIDE,
      "api/docker-compose.yml": "services: {}\n",
      "_global.yml": { version: 1, alert_rules: [], users: [], registries: [], webhooks: [] },
    });
    const p = readImport(dir);
    expect(Object.keys(p.apps)).toEqual(["web"]);
    expect(p.global?.users).toEqual([]);
  });

  it.each([
    ["an unknown key", { ...SIDE, extra: 1 }, "web/sundeck.yml: unknown key extra"],
    [
      "an unknown key in a rule",
      { ...SIDE, alert_rules: [{ ...RULE, id: 3 }] },
      "web/sundeck.yml: unknown key alert_rules[0].id",
    ],
    [
      "a secret key in a target",
      { ...SIDE, backups: [{ strategy: "volume", service: "app", target: { kind: "s3", secret_key: "x" } }] },
      "web/sundeck.yml: unknown key backups[0].target.secret_key",
    ],
    [
      "51 rules",
      { ...SIDE, alert_rules: Array.from({ length: 51 }, (_, i) => ({ ...RULE, name: `r${i}` })) },
      "web/sundeck.yml: alert_rules: expected array length to be less or equal to 50",
    ],
    ["a missing list", { version: 1, alert_rules: [], backups: [] }, "web/sundeck.yml: access is required"],
    ["another version", { ...SIDE, version: 2 }, "web/sundeck.yml: version: expected 1"],
    [
      "an unknown kind",
      { ...SIDE, alert_rules: [{ ...RULE, kind: "load" }] },
      "web/sundeck.yml: alert_rules[0].kind must be one of cpu, memory, disk, app_down, backup_failed, http_5xx, cert_expiry",
    ],
    [
      "an unknown role",
      { ...SIDE, access: [{ username: "a", role: "owner" }] },
      "web/sundeck.yml: access[0].role must be one of super_admin, admin, manage, viewer",
    ],
    [
      "a local target with s3 fields",
      { ...SIDE, backups: [{ strategy: "volume", service: "app", target: { kind: "local", endpoint: "https://x" } }] },
      "web/sundeck.yml: backups[0].target: a local target has no other fields",
    ],
    [
      "duplicate keys",
      "version: 1\nversion: 1\nalert_rules: []\nbackups: []\naccess: []\n",
      "web/sundeck.yml: invalid yaml at line 2: map keys must be unique",
    ],
    ["a custom tag", "version: !!js/undefined 1\n", "web/sundeck.yml: invalid yaml"],
    ["two documents", "version: 1\n---\nversion: 1\n", "web/sundeck.yml: must hold one YAML document, found 2"],
    ["a directive", "%YAML 1.1\n---\nversion: 1\n", "web/sundeck.yml: YAML directives are not allowed"],
    ["a scalar", "hello\n", "web/sundeck.yml: the document: expected object"],
  ])("refuses %s, naming the file and key", (_n, content, message) => {
    const p = problems({ "web/sundeck.yml": content });
    expect(p).toHaveLength(1);
    expect(p[0].startsWith(message)).toBe(true);
  });

  it("refuses an alias bomb", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      levels.push(`${cur}: &${cur} [${Array(10).fill(`*${prev}`).join(", ")}]`);
    }
    const p = problems({ "web/sundeck.yml": `${levels.join("\n")}\n` });
    expect(p).toHaveLength(1);
    expect(p[0]).toStartWith("web/sundeck.yml: invalid yaml");
  });

  it("refuses a file over 1 MiB", () => {
    expect(problems({ "web/sundeck.yml": `# ${"x".repeat(1024 * 1024)}\n` })).toEqual(["web/sundeck.yml: larger than 1 MiB"]);
  });

  it("names every bad file at once", () => {
    const p = problems({
      "web/sundeck.yml": { ...SIDE, a: 1 },
      "api/sundeck.yml": { ...SIDE, b: 1 },
      "_global.yml": { version: 1 },
    });
    expect(p).toEqual([
      "api/sundeck.yml: unknown key b",
      "web/sundeck.yml: unknown key a",
      "_global.yml: alert_rules is required",
    ]);
  });

  it("refuses a symlinked or hard-linked sidecar", () => {
    const dir = tree({ "real.yml": SIDE, "api/docker-compose.yml": "x", "web/docker-compose.yml": "x" });
    symlinkSync(join(dir, "real.yml"), join(dir, "web", "sundeck.yml"));
    linkSync(join(dir, "real.yml"), join(dir, "api", "sundeck.yml"));
    expect(() => readImport(dir)).toThrow(ImportRefused);
    try {
      readImport(dir);
    } catch (e) {
      expect((e as ImportRefused).problems).toEqual([
        "api/sundeck.yml: not a plain file (a symlink, a link or a directory)",
        "web/sundeck.yml: not a plain file (a symlink, a link or a directory)",
      ]);
    }
  });

  it("ignores directories that are not slugs", () => {
    expect(problems({ "Web/sundeck.yml": "garbage: [", "web_x/sundeck.yml": "x: !!bad" })).toEqual([]);
  });
});

describe("planImport", () => {
  let s: TestServer;
  let dir: string;
  beforeAll(async () => {
    s = await startTestServer();
    dir = tempDir();
    await plantState(s.ctx, dir);
    writeExport(s.ctx, dir);
  });
  afterAll(() => s.stop());

  /** The plan for the export with `edit` applied to the parsed file `rel`. */
  const planWith = (rel: string, edit: (d: any) => void) => {
    const copy = tempDir();
    for (const f of ["web/sundeck.yml", "_global.yml"]) {
      const data = parse(readFileSync(join(dir, f), "utf8"));
      if (f === rel) edit(data);
      mkdirSync(join(copy, f, ".."), { recursive: true });
      writeFileSync(join(copy, f), stringify(data));
    }
    return planImport(s.ctx, readImport(copy));
  };
  const summaries = (p: ReturnType<typeof planImport>) => p.changes.map((c) => c.summary);

  it("plans nothing for an unchanged export", () => {
    expect(planImport(s.ctx, readImport(dir))).toEqual({ changes: [], refused: [], deferred: [] });
  });

  it("updates a changed rule with the changed fields only, removes a missing one, creates a new one", () => {
    const p = planWith("web/sundeck.yml", (d) => {
      d.alert_rules[0].threshold = 95;
      d.alert_rules.splice(1, 1);
      d.alert_rules.push({ ...RULE, name: "new", webhooks: ["pager"] });
    });
    expect(summaries(p)).toEqual([
      "remove alert rule mem high of web",
      "change threshold of alert rule cpu high of web",
      "create alert rule new (cpu) of web",
    ]);
    expect(p.changes[1]).toMatchObject({ op: "update", patch: { threshold: 95 } });
    const pager = s.ctx.webhooks.list(false).find((w) => w.name === "pager")!;
    expect(p.changes[2]).toMatchObject({ op: "create", body: { app_slug: "web", webhook_ids: [pager.id] } });
    expect(p.refused).toEqual([]);
  });

  it("refuses rules the API would refuse, or naming a webhook that does not exist", () => {
    const p = planWith("web/sundeck.yml", (d) => {
      d.alert_rules[0].threshold = 9000;
      d.alert_rules[1].webhooks = ["nope"];
      d.alert_rules.push({ ...RULE, name: "host", kind: "disk" });
    });
    expect(p.changes).toEqual([]);
    expect(p.refused).toEqual([
      {
        file: "web/sundeck.yml",
        what: "alert rule cpu high",
        reason: "threshold of cpu must be a percent of one core or of the limit (0 to 6400)",
      },
      { file: "web/sundeck.yml", what: "alert rule mem high", reason: "no webhook named nope" },
      { file: "web/sundeck.yml", what: "alert rule host", reason: "app_slug must be null for disk: it watches the host" },
    ]);
  });

  it("changes a backup config's fields, creates a local one, never creates or re-points an s3 one", () => {
    const p = planWith("web/sundeck.yml", (d) => {
      const local = d.backups.find((b: any) => b.target.kind === "local");
      local.schedule = "30 4 * * *";
      local.pre_hooks = ["sync"];
      const s3 = d.backups.find((b: any) => b.target.kind === "s3");
      s3.target.endpoint = "https://attacker.example.net";
      d.backups.push({ strategy: "volume", service: "db", target: { kind: "local" }, schedule: "not cron" });
      d.backups.push({ strategy: "redis", service: "db", target: { kind: "local" }, schedule: "* * * * * *" });
      d.backups.push({ strategy: "postgres", service: "app", target: { kind: "local" } });
    });
    expect(summaries(p)).toEqual([
      "remove backup config app volume (s3)",
      "change schedule, pre_hooks of backup config db postgres (local)",
      "create backup config app postgres (local)",
    ]);
    expect(p.changes[2]).toMatchObject({
      op: "create",
      input: { strategy: "postgres", service: "app", target: { kind: "local" }, enabled: true },
    });
    expect(p.refused.map((r) => [r.what, r.reason])).toEqual([
      [
        "backup config app volume (s3)",
        "an s3 target is never created or re-pointed from the repository (its secret key is not there): set it on this server",
      ],
      // the API's cadence rule holds for the repository too: no storm of one backup a second
      [
        "backup config db redis (local)",
        "schedule: the seconds field must be one second from 0 to 59 (at most one backup a minute)",
      ],
      ["backup config db volume (local)", "schedule must be a cron expression of 5 or 6 fields"],
    ]);
  });

  it("revokes a grant the file drops, never grants, creates users or changes roles", () => {
    const p = planWith("web/sundeck.yml", (d) => {
      d.access = [
        { username: "alice", role: "admin" },
        { username: "root", role: "super_admin" },
        { username: "mallory", role: "manage" },
      ];
    });
    expect(summaries(p)).toEqual(["revoke bob's access to web"]);
    expect(p.refused.map((r) => `${r.what}: ${r.reason}`)).toEqual([
      "access of alice: git sync never changes roles (the file says admin, the user is manage)",
      "access of root: git sync never grants access: grant it on this server",
      "access of mallory: no such user: git sync never creates users",
    ]);
  });

  it("mirrors users, registries and webhooks without importing them; imports global rules", () => {
    const p = planWith("_global.yml", (d) => {
      d.users = [
        { username: "alice", role: "super_admin" },
        { username: "eve", role: "super_admin" },
        { username: "root", role: "super_admin" },
      ];
      d.registries[0].url = "https://evil.example.net";
      d.webhooks[0].origin = "https://evil.example.net";
      d.alert_rules[0].threshold = 5;
    });
    expect(summaries(p)).toEqual(["change threshold of alert rule disk low of the global scope"]);
    expect(p.refused.map((r) => `${r.what}: ${r.reason}`)).toEqual([
      "user alice: git sync never changes roles (the file says super_admin, the user is manage)",
      "user bob: git sync never removes users",
      "user eve: git sync never creates users",
      "registry ghcr: registries are not imported: their credentials stay on this server",
      "webhook ops: webhooks are not imported: their addresses and secrets stay on this server",
    ]);
  });

  it("defers the sidecar of an app that is not deployed yet", () => {
    const copy = tree({ "later/sundeck.yml": { ...SIDE, alert_rules: [RULE] } });
    expect(planImport(s.ctx, readImport(copy))).toEqual({ changes: [], refused: [], deferred: ["later"] });
  });
});

describe("applyImport", () => {
  it("applies through the services and records each change with actor_source git_sync", async () => {
    const s = await startTestServer();
    try {
      const dir = tempDir();
      await plantState(s.ctx, dir);
      writeExport(s.ctx, dir);
      const edit = (rel: string, f: (d: any) => void) => {
        const d = parse(readFileSync(join(dir, rel), "utf8"));
        f(d);
        writeFileSync(join(dir, rel), stringify(d));
      };
      edit("web/sundeck.yml", (d) => {
        d.alert_rules[0].threshold = 95;
        d.alert_rules = d.alert_rules.filter((r: any) => r.name !== "mem high");
        d.alert_rules.push({ ...RULE, name: "new", enabled: true, repeat_interval: null, silenced_until: null, webhooks: [] });
        d.backups = d.backups.filter((b: any) => b.target.kind === "local");
        d.backups[0].retention_count = 3;
        d.access = d.access.filter((a: any) => a.username !== "bob");
      });
      const plan = planImport(s.ctx, readImport(dir));
      const before = s.ctx.activity.list({ limit: 200 }, { all: true }).entries[0].id;
      const r = applyImport(s.ctx, plan, gitSyncActor("alice@example.com"));
      expect(r.failed).toEqual([]);
      expect(r.applied).toHaveLength(6);
      // the state is what the file says: a fresh export reproduces it
      const again = tempDir();
      mkdirSync(join(again, "web"));
      writeFileSync(join(again, "web", "docker-compose.yml"), "services: {}\n");
      writeExport(s.ctx, again);
      expect(parse(readFileSync(join(again, "web", "sundeck.yml"), "utf8"))).toEqual(
        parse(readFileSync(join(dir, "web", "sundeck.yml"), "utf8")),
      );
      expect(planImport(s.ctx, readImport(dir)).changes).toEqual([]);
      const entries = s.ctx.activity.list({ limit: 200 }, { all: true }).entries.filter((e) => e.id > before);
      expect(entries.map((e) => [e.category, e.action, e.actor_source, e.actor_name]).sort()).toEqual(
        [
          ["access", "access_revoked", "git_sync", "alice@example.com"],
          ["alert", "alert_rule_created", "git_sync", "alice@example.com"],
          ["alert", "alert_rule_removed", "git_sync", "alice@example.com"],
          ["alert", "alert_rule_updated", "git_sync", "alice@example.com"],
          ["backup", "config_removed", "git_sync", "alice@example.com"],
          ["backup", "config_updated", "git_sync", "alice@example.com"],
        ].sort(),
      );
    } finally {
      await s.stop();
    }
  });

  it("reports a change a service refuses and applies the others", async () => {
    const s = await startTestServer();
    try {
      const dir = tempDir();
      await plantState(s.ctx, dir);
      const plan = {
        changes: [
          {
            kind: "backup_config" as const,
            op: "create" as const,
            file: "web/sundeck.yml",
            slug: "web",
            summary: "x",
            input: { strategy: "volume" as const, service: "nope", target: { kind: "local" as const } },
          },
          {
            kind: "grant" as const,
            op: "revoke" as const,
            file: "web/sundeck.yml",
            slug: "web",
            userId: 2,
            username: "alice",
            summary: "y",
          },
        ],
        refused: [],
        deferred: [],
      };
      const r = applyImport(s.ctx, plan, gitSyncActor());
      expect(r.failed.map((f) => f.error)).toEqual(["service: the app has no service nope"]);
      expect(r.applied.map((c) => c.summary)).toEqual(["y"]);
    } finally {
      await s.stop();
    }
  });
});
