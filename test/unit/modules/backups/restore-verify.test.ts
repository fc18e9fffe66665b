/**
 * A restore from a stored run checks the archive against the size and sha256 its run recorded, on the real SQLite and
 * the real local target with a fake strategy and fake containers around it: a stored file changed since the backup
 * fails the restore before anything is stopped or restored (a tar in the vetting pass, anything else in a pass of its
 * own), and a file that changes after that check (between the passes) fails it too, the containers started again.
 * Every container a restore stops is written in its row before the stop; recovery starts each of them again.
 */
import { describe, expect, it } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openDb } from "../../../../src/db";
import { createSecrets, deriveKeys } from "../../../../src/lib/crypto";
import { iso, systemClock } from "../../../../src/lib/time";
import { LogSink } from "../../../../src/log/logger";
import { createActivity } from "../../../../src/modules/activity/service";
import { createBackupRepo } from "../../../../src/modules/backups/repo";
import { digesting } from "../../../../src/modules/backups/restore";
import { createBackups, INTERRUPTED } from "../../../../src/modules/backups/service";
import { createTarget } from "../../../../src/modules/backups/targets";
import type { Target } from "../../../../src/modules/backups/types";
import type { BackupTarget } from "../../../../src/shared/backups";
import { fakeContainer, fakeContainers, fakeStrategy } from "../../../helpers/backups";
import { gzip, member, tar } from "../../../helpers/tar-corpus";
import { tempDir } from "../../../helpers/tmp";

const actor = { userId: null, name: "test", source: "cli" as const, ip: null };
const text = (s: string) => new TextEncoder().encode(s);

function setup() {
  const dir = tempDir();
  const db = openDb(join(dir, "sundeck.db"));
  const log = new LogSink({ stdout: false }).logger("backups");
  const repo = createBackupRepo(db);
  const strategies = { postgres: fakeStrategy("postgres"), volume: fakeStrategy("volume") };
  strategies.volume.chunks = [tar(member({ name: "data/ok" }, "good"))];
  const containers = fakeContainers();
  const localDir = join(dir, "backups");
  /** Called before each read of a stored archive (the test changes the file there). */
  const hooks = { beforeGet: (_n: number) => {}, gets: 0 };
  const backups = createBackups({
    db,
    clock: systemClock,
    log,
    repo,
    secrets: createSecrets(deriveKeys("test-master-secret-0123456789abcdef").encryption),
    alerts: { raise: () => {} },
    containers,
    strategy: (id) => strategies[id as keyof typeof strategies] ?? null,
    target: (spec, secret): Target => {
      const t = createTarget({ ...spec, secret_key: secret ?? "" } as BackupTarget, { localDir });
      return {
        ...t,
        get: async (key) => {
          hooks.beforeGet(++hooks.gets);
          return t.get(key);
        },
      };
    },
    services: (slug) => (slug === "web" ? ["db", "app"] : null),
    lock: async () => () => {},
    tmpDir: join(dir, "tmp"),
    maxRestoreBytes: 1024 * 1024,
    maxConcurrentRestores: 4,
    activity: createActivity({ db, clock: systemClock, log }),
  });
  /** A stored run of `strategy` (service app for volume, db for postgres); returns its row and file. */
  const stored = async (strategy: "postgres" | "volume") => {
    const c = backups.configs.create(
      "web",
      { strategy, service: strategy === "volume" ? "app" : "db", target: { kind: "local" } },
      actor,
    );
    const { run_id } = backups.runNow(c.id, actor);
    await backups.waitRun(c.id);
    const run = repo.run(run_id)!;
    expect(run.status).toBe("succeeded");
    return { run, file: join(localDir, run.location!) };
  };
  const restore = async (runId: number) => {
    hooks.gets = 0;
    const { restore_id } = await backups.restoreRun(runId, actor);
    await backups.waitRestore(restore_id);
    return repo.restore(restore_id)!;
  };
  return { repo, backups, strategies, containers, hooks, stored, restore };
}

describe("a stored archive changed since its backup", () => {
  it("fails a volume restore in the vetting pass, before anything is stopped or restored", async () => {
    const w = setup();
    const { run, file } = await w.stored("volume");
    writeFileSync(file, gzip(tar(member({ name: "data/ok" }, "evil"))));
    const r = await w.restore(run.id);
    expect(r.status).toBe("failed");
    expect(r.error).toStartWith("archive changed since the backup: sha256 ");
    expect(r.error).toContain(`expected ${run.sha256!.slice(0, 12)}`);
    expect(w.containers.stops).toEqual([]);
    expect(w.containers.starts).toEqual([]);
    expect(w.strategies.volume.restored).toEqual([]);
    expect(r.stoppedContainers).toBeNull();
  });

  it("fails a restore of an archive that is not a tar (a dump) in a pass of its own, before a byte is restored", async () => {
    const w = setup();
    const { run, file } = await w.stored("postgres");
    // the same length: only the hash tells
    writeFileSync(file, gzip(text("hello BACKUP\n")));
    const r = await w.restore(run.id);
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/^archive changed since the backup: sha256 [0-9a-f]{12}… expected [0-9a-f]{12}…/);
    expect(w.strategies.postgres.restored).toEqual([]);
    expect(w.containers.stops).toEqual([]);
  });

  it("restores an intact archive, reading it once to check and once to restore", async () => {
    const w = setup();
    const { run } = await w.stored("postgres");
    const r = await w.restore(run.id);
    expect(r).toMatchObject({ status: "succeeded", error: null });
    expect(w.hooks.gets).toBe(2);
    expect(new TextDecoder().decode(w.strategies.postgres.restored[0].bytes)).toBe("hello backup\n");
  });
});

describe("a stored archive that changes after the check", () => {
  it("fails a dump's restore at the end of the stream, saying it changed while restored", async () => {
    const w = setup();
    const { run, file } = await w.stored("postgres");
    // the first read (the check) sees the stored file; the second (the restore) a changed one
    w.hooks.beforeGet = (n) => {
      if (n === 2) writeFileSync(file, gzip(text("hello BACKUP\n")));
    };
    const r = await w.restore(run.id);
    expect(r.status).toBe("failed");
    expect(r.error).toStartWith("archive changed while it was restored (it matched its backup when checked");
    expect(w.strategies.postgres.restored).toEqual([]);
  });

  it("fails a volume restore changed while its service was being stopped, and starts the service again", async () => {
    const w = setup();
    const { run, file } = await w.stored("volume");
    w.containers.stop = async (c) => {
      w.containers.stops.push(c.name);
      writeFileSync(file, gzip(tar(member({ name: "data/ok" }, "evil"), member({ name: "data/more" }, "x".repeat(4096)))));
    };
    const r = await w.restore(run.id);
    expect(r.status).toBe("failed");
    expect(r.error).toStartWith("archive changed while it was restored");
    expect(r.error).toContain("bytes stored");
    expect(w.containers.stops).toEqual(["sundeck-app-app-1"]);
    expect(w.containers.starts).toEqual(["sundeck-app-app-1"]);
    expect(w.strategies.volume.restored).toEqual([]);
  });
});

describe("the containers a restore stops", () => {
  it("are each written in the restore's row before they are stopped, every replica of the service", async () => {
    const w = setup();
    const { run } = await w.stored("volume");
    const replicas = [fakeContainer("app"), { ...fakeContainer("app"), id: "id-app-2", name: "sundeck-app-app-2" }];
    w.containers.running = async () => replicas;
    const seen: Array<string | null> = [];
    w.containers.stop = async (c) => {
      seen.push(w.repo.restoresIn("running")[0]?.stoppedContainers ?? null);
      w.containers.stops.push(c.name);
    };
    const r = await w.restore(run.id);
    expect(r).toMatchObject({ status: "succeeded", stoppedContainers: '["id-app","id-app-2"]' });
    expect(seen).toEqual(['["id-app"]', '["id-app","id-app-2"]']);
    expect(w.containers.starts).toEqual(["sundeck-app-app-1", "sundeck-app-app-2"]);
  });

  it("are all started again by recovery after a kill; rows without the list fall back to their one container", async () => {
    const w = setup();
    const row = (over: Partial<Parameters<typeof w.repo.insertRestore>[0]>) =>
      w.repo.insertRestore({
        appSlug: "web",
        service: "app",
        strategy: "volume",
        container: "sundeck-web-app-1",
        ...over,
        ...running,
      });
    const running = { status: "running", runId: null, startedAt: iso(Date.now()) };
    const both = row({ stoppedContainers: JSON.stringify(["id-a1", "id-a2"]) });
    const old = row({ container: "sundeck-web-app-9" });
    const none = row({ stoppedContainers: "[]" });
    const dump = row({ strategy: "postgres", container: "sundeck-web-db-1" });
    await w.backups.recover();
    expect(w.containers.starts).toEqual(["id-a1", "id-a2", "sundeck-web-app-9"]);
    for (const r of [both, old, none, dump]) expect(w.repo.restore(r.id)).toMatchObject({ status: "failed", error: INTERRUPTED });
  });
});

describe("digesting", () => {
  it("hashes what the consumer left unread, and stops a strict stream before a byte past the expected size", async () => {
    const bytes = text("0123456789");
    const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const chunks = () => new Blob([bytes.subarray(0, 4), bytes.subarray(4)]).stream();
    const d = digesting(chunks());
    const reader = d.stream.getReader();
    await reader.read();
    await reader.cancel();
    expect(await d.finish()).toEqual({ size: 10, sha256 });

    const strict = digesting(chunks(), { size: 4, sha256 }, { strict: true });
    await expect(new Response(strict.stream).arrayBuffer()).rejects.toThrow("more than the 4 bytes stored");
    expect((await strict.finish()).sha256).toBeNull();
  });
});
