/**
 * The backups service's runs on a real SQLite and the real local target, with a fake strategy and fake containers
 * around it and a clock moved by hand: live progress, sha256 and size as stored, hooks, the backup_failed event,
 * retention by count and by age (file and row go together), a missed run run once after downtime, recovery after a
 * kill (the interrupted run failed, its object and the target's temp files gone, a stopped container started), and
 * a stop that cancels a run in flight.
 */
import { describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openDb } from "../../../../src/db";
import { createSecrets, deriveKeys } from "../../../../src/lib/crypto";
import { type Clock, iso, systemClock } from "../../../../src/lib/time";
import { LogSink } from "../../../../src/log/logger";
import { createActivity } from "../../../../src/modules/activity/service";
import type { ConfigInput } from "../../../../src/modules/backups/model";
import { createBackupRepo } from "../../../../src/modules/backups/repo";
import { createBackups, INTERRUPTED } from "../../../../src/modules/backups/service";
import { createLocalTarget, createTarget } from "../../../../src/modules/backups/targets";
import type { BackupTarget } from "../../../../src/shared/backups";
import { type FakeStrategy, fakeContainer, fakeContainers, fakeStrategy, gateOn } from "../../../helpers/backups";
import { FakeClock } from "../../../helpers/clock";
import { until } from "../../../helpers/http";
import { member, tar } from "../../../helpers/tar-corpus";
import { tempDir } from "../../../helpers/tmp";

const actor = { userId: null, name: "test", source: "cli" as const, ip: null };
const DAY = 86_400_000;

function world(clock: Clock = new FakeClock(), others: FakeStrategy[] = []) {
  const dir = tempDir();
  const db = openDb(join(dir, "sundeck.db"));
  const log = new LogSink({ stdout: false }).logger("backups");
  const strategy = fakeStrategy("postgres");
  const containers = fakeContainers();
  const raised: Array<{ ok?: boolean; message: string; subject?: string }> = [];
  const localDir = join(dir, "backups");
  const repo = createBackupRepo(db);
  const backups = createBackups({
    db,
    clock,
    log,
    repo,
    secrets: createSecrets(deriveKeys("test-master-secret-0123456789abcdef").encryption),
    alerts: { raise: (e) => raised.push(e) },
    containers,
    strategy: (id) => (id === "postgres" ? strategy : (others.find((o) => o.id === id) ?? null)),
    target: (spec, secret) => createTarget({ ...spec, secret_key: secret ?? "" } as BackupTarget, { localDir }),
    services: (slug) => (slug === "web" ? ["db"] : null),
    lock: async () => () => {},
    tmpDir: join(dir, "tmp"),
    maxRestoreBytes: 1024 * 1024,
    maxConcurrentRestores: 4,
    hookTimeoutMs: 300,
    activity: createActivity({ db, clock, log }),
    sweepLocal: () => createLocalTarget({ dir: localDir }).sweepTemp(),
  });
  const config = (over: Partial<ConfigInput> = {}) =>
    backups.configs.create("web", { strategy: "postgres", service: "db", target: { kind: "local" }, ...over }, actor);
  /** Every archive file under the local target (temp files included). */
  const files = (): string[] => {
    const out: string[] = [];
    const walk = (d: string) => {
      if (!existsSync(d)) return;
      for (const e of readdirSync(d, { withFileTypes: true }))
        e.isDirectory() ? walk(join(d, e.name)) : out.push(join(d, e.name));
    };
    walk(localDir);
    return out;
  };
  const run = async (configId: number) => {
    const { run_id } = backups.runNow(configId, actor);
    await backups.waitRun(configId);
    return repo.run(run_id)!;
  };
  return { dir, db, clock: clock as FakeClock, strategy, containers, raised, localDir, repo, backups, config, files, run };
}

describe("a run", () => {
  it("streams through gzip into the target, shows live progress, and records size and sha256 of the stored file", async () => {
    const w = world();
    const c = w.config();
    w.strategy.chunks = [crypto.getRandomValues(new Uint8Array(65536)), crypto.getRandomValues(new Uint8Array(65536))];
    w.strategy.holdAfter = 1;
    const open = gateOn(w.strategy);
    const { run_id } = w.backups.runNow(c.id, actor);
    const live = await until(() => w.backups.runs("web", 10).find((r) => r.id === run_id && (r.progress_bytes ?? 0) > 0), {
      what: "progress while running",
    });
    expect(live.status).toBe("running");
    expect(() => w.backups.runNow(c.id, actor)).toThrow(/in progress/);
    open();
    await w.backups.waitRun(c.id);
    const r = w.repo.run(run_id)!;
    expect(r.status).toBe("succeeded");
    const file = join(w.localDir, r.location!);
    const bytes = new Uint8Array(await Bun.file(file).arrayBuffer());
    expect(r.sizeBytes).toBe(bytes.byteLength);
    expect(r.sha256).toBe(new Bun.CryptoHasher("sha256").update(bytes).digest("hex"));
    expect(Bun.gunzipSync(bytes).byteLength).toBe(131072);
    expect(w.backups.runs("web", 10)[0]).toMatchObject({ id: run_id, progress_bytes: null, size_bytes: bytes.byteLength });
    expect(w.raised.at(-1)).toMatchObject({ ok: true });
  });

  it("fails on a failing pre hook before dumping, still runs the post hooks, and raises backup_failed", async () => {
    const w = world();
    const c = w.config({ pre_hooks: ["lock-tables", "false"], post_hooks: ["unlock-tables"] });
    w.containers.codeOf = (cmd) => (cmd === "false" ? 1 : 0);
    const r = await w.run(c.id);
    expect(r).toMatchObject({ status: "failed", sizeBytes: null, sha256: null });
    expect(r.error).toMatch(/^pre hook 2 failed \(exit 1\)/);
    expect(w.containers.execs).toEqual(["lock-tables", "false", "unlock-tables"]);
    expect(w.files()).toEqual([]);
    expect(w.raised).toEqual([
      expect.objectContaining({ kind: "backup_failed", app_slug: "web", message: expect.stringContaining("pre hook 2 failed") }),
    ]);
  });

  it("gives up on a hook that hangs, naming it", async () => {
    const w = world();
    const c = w.config({ pre_hooks: ["hang"] });
    const r = await w.run(c.id);
    expect(r).toMatchObject({ status: "failed", error: "pre hook 1 timed out after 300 ms" });
  }, 15_000);

  it("fails when the dump breaks midway, leaving no file, and resolves the alert on the next success", async () => {
    const w = world();
    const c = w.config();
    w.strategy.chunks = [new Uint8Array(1000), new Error("pg_dump: connection lost")];
    const bad = await w.run(c.id);
    expect(bad.status).toBe("failed");
    expect(bad.error).toContain("connection lost");
    expect(w.files()).toEqual([]);
    w.strategy.chunks = [new Uint8Array(10)];
    expect((await w.run(c.id)).status).toBe("succeeded");
    expect(w.raised.map((e) => e.ok ?? false)).toEqual([false, true]);
  });
});

describe("server-wide limits", () => {
  it("dumps at most two runs at once; the others wait their turn and then succeed", async () => {
    const w = world();
    const configs = [1, 2, 3, 4].map((h) => w.config({ schedule: `0 ${h} * * *` }));
    const dump = w.strategy.dump.bind(w.strategy);
    let opened = 0;
    w.strategy.dump = (c, ctl) => {
      opened++;
      return dump(c, ctl);
    };
    const open = gateOn(w.strategy);
    const ids = configs.map((c) => w.backups.runNow(c.id, actor).run_id);
    await until(() => opened === 2, { what: "two dumps" });
    await Bun.sleep(50);
    expect(opened).toBe(2);
    // the waiting ones are running (queued) as far as the API says
    expect(
      w.backups
        .runs("web", 10)
        .filter((r) => ids.includes(r.id))
        .map((r) => r.status),
    ).toEqual(Array(4).fill("running"));
    open();
    for (const c of configs) await w.backups.waitRun(c.id);
    expect(opened).toBe(4);
    expect(ids.map((id) => w.repo.run(id)!.status)).toEqual(Array(4).fill("succeeded"));
  });

  it("masks the container's env values in a failed dump's error (viewers read runs)", async () => {
    const w = world();
    const c = w.config();
    w.containers.find = async () => ({
      ...fakeContainer("db"),
      env: ["POSTGRES_PASSWORD=hunter2-but-longer", "PATH=/usr/bin", "REDIS_PASSWORD_FILE=/run/secrets/redis"],
    });
    w.strategy.chunks = [new Error("pg_dump: connection to postgres://app:hunter2-but-longer@db failed (/run/secrets/redis)")];
    const r = await w.run(c.id);
    expect(r.status).toBe("failed");
    // a *_FILE value is where a secret is, not the secret: it stays, so the error can name the file
    expect(r.error).toBe("pg_dump: connection to postgres://app:[env]@db failed (/run/secrets/redis)");
  });
});

describe("retention", () => {
  it("keeps the newest retention_count runs: older files and rows go together", async () => {
    const w = world();
    const c = w.config({ retention_count: 2 });
    const runs = [];
    for (let i = 0; i < 4; i++) {
      runs.push(await w.run(c.id));
      w.clock.advance(60_000);
    }
    const left = w.repo.kept(c.id).map((r) => r.id);
    expect(left).toEqual([runs[3].id, runs[2].id]);
    expect(w.files().sort()).toEqual([join(w.localDir, runs[2].location!), join(w.localDir, runs[3].location!)].sort());
    expect(w.repo.run(runs[0].id)).toBeUndefined();
  });

  it("deletes runs older than retention_days, and a failed delete keeps the row", async () => {
    const w = world();
    const c = w.config({ retention_days: 2 });
    const old = await w.run(c.id);
    w.clock.advance(3 * DAY);
    const fresh = await w.run(c.id);
    expect(w.repo.run(old.id)).toBeUndefined();
    expect(existsSync(join(w.localDir, old.location!))).toBe(false);
    expect(w.repo.run(fresh.id)?.status).toBe("succeeded");
    // a row whose object cannot be deleted (an invalid key) stays for the next pass
    w.repo.updateRun(fresh.id, { location: "../outside" });
    w.clock.advance(3 * DAY);
    await w.run(c.id);
    expect(w.repo.run(fresh.id)).toBeDefined();
  });
});

describe("schedules", () => {
  it("runs a missed scheduled backup once after downtime, however many due times passed", async () => {
    const w = world();
    const c = w.config({ schedule: "0 * * * *", timezone: "UTC" });
    expect(w.backups.runMissed()).toEqual([]);
    w.clock.advance(5 * 3_600_000 + 60_000);
    expect(w.backups.runMissed()).toEqual([c.id]);
    await w.backups.waitRun(c.id);
    const runs = w.backups.runs("web", 10);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger: "missed", status: "succeeded" });
    expect(w.repo.config(c.id)!.lastScheduledAt).toBe(iso(Date.parse("2026-11-22T17:00:00Z")));
    expect(w.backups.runMissed()).toEqual([]);
    // the missed due time raised the alert, the catch-up run's success resolved it
    expect(w.raised).toEqual([
      expect.objectContaining({
        message: expect.stringContaining("of 2026-11-22T13:00:00.000Z missed while the server was down"),
      }),
      expect.objectContaining({ ok: true }),
    ]);
  });

  it("fires a schedule on its timer with the real clock, and stops firing once disabled", async () => {
    const w = world(systemClock);
    await w.backups.start();
    const c = w.config({ schedule: "* * * * * *" });
    const first = await until(() => w.backups.runs("web", 10).find((r) => r.trigger === "schedule" && r.status === "succeeded"), {
      timeout: 5000,
      what: "a scheduled run",
    });
    expect(first.config_id).toBe(c.id);
    w.backups.configs.update(c.id, { enabled: false }, actor);
    await w.backups.waitRun(c.id);
    const count = w.backups.runs("web", 100).length;
    // the next second's due time passes with the timer gone
    const next = Date.now() + 1100;
    await until(() => Date.now() > next, { timeout: 3000, every: 100, what: "the next due time" });
    expect(w.backups.runs("web", 100).length).toBe(count);
    await w.backups.stop();
  });

  it("says when a schedule runs next, in its time zone, and nothing for a disabled config", () => {
    const w = world();
    const c = w.config({ schedule: "30 2 * * *", timezone: "America/New_York" });
    expect(c.next_run_at).toBe("2026-11-23T07:30:00.000Z");
    expect(w.backups.configs.update(c.id, { enabled: false }, actor).next_run_at).toBeNull();
  });
});

describe("recovery after a kill", () => {
  it("marks an interrupted run failed, removes its partial object and temp files, and starts a container a restore stopped", async () => {
    const w = world();
    const c = w.config();
    const run = w.repo.insertRun({
      configId: c.id,
      appSlug: "web",
      strategy: "postgres",
      service: "db",
      targetKind: "local",
      targetJson: "{}",
      location: "web/db/postgres-partial-r1.bin.gz",
      status: "running",
      trigger: "manual",
      startedAt: iso(w.clock.now()),
    });
    mkdirSync(join(w.localDir, "web", "db"), { recursive: true });
    writeFileSync(join(w.localDir, "web", "db", "postgres-partial-r1.bin.gz"), "half");
    writeFileSync(join(w.localDir, "web", "db", ".sundeck-tmp-abc"), "half");
    const restore = w.repo.insertRestore({
      runId: null,
      appSlug: "web",
      strategy: "volume",
      service: "app",
      container: "sundeck-web-app-1",
      status: "running",
      startedAt: iso(w.clock.now()),
    });
    await w.backups.recover();
    expect(w.repo.run(run.id)).toMatchObject({ status: "failed", error: INTERRUPTED, sizeBytes: null });
    expect(w.repo.restore(restore.id)).toMatchObject({ status: "failed", error: INTERRUPTED });
    expect(w.files()).toEqual([]);
    expect(w.containers.starts).toEqual(["sundeck-web-app-1"]);
    expect(w.repo.kept(c.id)).toEqual([]);
  });

  it("lets a run asked for while recovery is under way wait for it, and keeps it out of the interrupted ones", async () => {
    const w = world();
    const c = w.config();
    const old = w.repo.insertRun({
      configId: c.id,
      appSlug: "web",
      strategy: "postgres",
      service: "db",
      targetKind: "local",
      targetJson: "{}",
      location: "web/db/postgres-old-r1.bin.gz",
      status: "running",
      trigger: "manual",
      startedAt: iso(w.clock.now()),
    });
    const recovering = w.backups.recover();
    const { run_id } = w.backups.runNow(c.id, actor);
    await recovering;
    await w.backups.waitRun(c.id);
    expect(w.repo.run(old.id)?.status).toBe("failed");
    expect(w.repo.run(run_id)).toMatchObject({ status: "succeeded", error: null });
    expect(w.files()).toEqual([join(w.localDir, w.repo.run(run_id)!.location!)]);
  });

  it("stop cancels a run in flight: recorded failed, no file left", async () => {
    const w = world();
    const c = w.config();
    w.strategy.chunks = [new Uint8Array(100_000), new Uint8Array(100_000)];
    w.strategy.holdAfter = 1;
    const open = gateOn(w.strategy);
    const { run_id } = w.backups.runNow(c.id, actor);
    await until(() => (w.backups.runs("web", 1)[0].progress_bytes ?? 0) > 0 || w.files().length > 0, { what: "a run in flight" });
    const stopped = w.backups.stop();
    open();
    await stopped;
    expect(w.repo.run(run_id)).toMatchObject({ status: "failed", error: "cancelled: the server is stopping" });
    expect(w.files()).toEqual([]);
  });
});

describe("a run of Sundeck's own state", () => {
  it("raises backup_failed without an app when it fails, so global rules hear of it", async () => {
    const w = world();
    const now = new Date(w.clock.now()).toISOString();
    const id = w.db.sqlite
      .query(
        `INSERT INTO backup_configs (app_slug, strategy, service, target_kind, target_json, pre_hooks, post_hooks, enabled, created_at, updated_at)
         VALUES (NULL, 'state', NULL, 'local', '{}', '[]', '[]', 1, ?, ?) RETURNING id`,
      )
      .get(now, now) as { id: number };
    // this world has no state source: the run fails
    const r = await w.run(id.id);
    expect(r.status).toBe("failed");
    expect(w.raised.at(-1)).toMatchObject({ app_slug: null, subject: "sundeck/state state" });
    expect(w.raised.at(-1)?.ok).toBeUndefined();
  });
});

describe("a volume run", () => {
  it("fails, keeping no file, when the volume holds what a restore would refuse (a symlink), naming the entry", async () => {
    const volume = fakeStrategy("volume");
    const w = world(undefined, [volume]);
    const b = w.backups;
    volume.chunks = [
      tar(member({ name: "data/ok.txt" }, "fine\n"), member({ name: "data/link", type: "2", linkname: "/etc/passwd" })),
    ];
    const c = b.configs.create("web", { strategy: "volume", service: "db", target: { kind: "local" } }, actor);
    const { run_id } = b.runNow(c.id, actor);
    await b.waitRun(c.id);
    const r = w.repo.run(run_id)!;
    expect(r.status).toBe("failed");
    expect(r.error).toBe(
      'the volume could not be restored from this archive, so it is not kept: archive entry "data/link": symlink',
    );
    expect(w.files()).toEqual([]);
  });

  it("stores a volume whose entries a restore accepts, byte for byte", async () => {
    const volume = fakeStrategy("volume");
    const w = world(undefined, [volume]);
    const b = w.backups;
    const archive = tar(member({ name: "data/", type: "5" }), member({ name: "data/ok.txt" }, "fine\n"));
    volume.chunks = [archive];
    const c = b.configs.create("web", { strategy: "volume", service: "db", target: { kind: "local" } }, actor);
    const { run_id } = b.runNow(c.id, actor);
    await b.waitRun(c.id);
    const r = w.repo.run(run_id)!;
    expect(r.status).toBe("succeeded");
    const stored = new Uint8Array(await Bun.file(join(w.localDir, r.location!)).arrayBuffer());
    expect(Buffer.from(Bun.gunzipSync(stored)).equals(Buffer.from(archive))).toBe(true);
  });
});
