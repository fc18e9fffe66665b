/**
 * `sundeck restore-state`: bring the server's database back from a state snapshot, on the server host, with the
 * server stopped. The snapshot is a file (`.sqlite.gz` or `.sqlite`) or a stored run of a `state` backup config,
 * found through the current database. Local like `users`: it reads the server config, not the API.
 */
import { Database } from "bun:sqlite";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "citty";
import { loadConfig } from "../config/load";
import type { Config } from "../config/schema";
import { dbPathOf } from "../context";
import { createSecrets, deriveKeys } from "../lib/crypto";
import {
  checkStateFile,
  isGzip,
  type KnownRun,
  replaceDatabase,
  StateRestoreError,
  settleRuns,
  unpackBeside,
} from "../modules/backups/state-restore";
import { createTarget } from "../modules/backups/targets";
import type { BackupTarget } from "../shared/backups";
import { CliError } from "./errors";
import { UsageError } from "./exit";
import { configArg } from "./local";

/** What to restore from: a file on this host, or a run recorded in the current database. */
export type StateOrigin = { file: string } | { runId: number };

/** What a restore did, for the lines printed. */
export interface StateRestored {
  from: string;
  dbPath: string;
  kept: string | null;
  sizeBytes: number;
  migrations: number;
  pending: string[];
  /** Backup runs the snapshot caught in progress, settled so the server's recovery deletes none of their archives. */
  settled: number;
}

/** The address the management API of `config` answers on, for the running-server check. */
export function healthUrl(config: Pick<Config, "management_addr" | "management_port">): string {
  const a = config.management_addr;
  const host = !a || a === "0.0.0.0" ? "127.0.0.1" : a === "::" ? "[::1]" : a.includes(":") ? `[${a}]` : a;
  return `http://${host}:${config.management_port}/api/health`;
}

/** Whether something answers on the management port (a server of this config running); false when nothing listens. */
export async function serverAnswers(config: Pick<Config, "management_addr" | "management_port">): Promise<boolean> {
  if (!config.management_port) return false;
  try {
    const res = await fetch(healthUrl(config), { signal: AbortSignal.timeout(2000), redirect: "manual" });
    await res.body?.cancel().catch(() => {});
    return true;
  } catch {
    return false;
  }
}

/** The stored archive of a succeeded `state` run, as a stream (hash-checked by the caller), and its name. */
async function runStream(
  config: Config,
  dbPath: string,
  runId: number,
): Promise<{ data: ReadableStream<Uint8Array>; name: string; sha256: string | null; known: KnownRun }> {
  if (!existsSync(dbPath)) throw new CliError(`no database at ${dbPath} to find run ${runId} in: use --file`);
  let db: Database;
  try {
    // read-write, so closing it removes the -wal and -shm a read-only connection would leave behind
    db = new Database(dbPath, { readwrite: true, create: false });
  } catch (e) {
    throw new CliError(`cannot open ${dbPath}: ${(e as Error).message}`);
  }
  type Row = {
    strategy: string;
    status: string;
    location: string | null;
    target_kind: string;
    target_json: string;
    sha256: string | null;
    size_bytes: number | null;
    finished_at: string | null;
    secret_enc: string | null;
    config_id: number | null;
  };
  let row: Row | null;
  try {
    row = db
      .query<Row, [number]>(
        `SELECT r.strategy, r.status, r.location, r.size_bytes, r.finished_at, r.target_kind, r.target_json, r.sha256, r.config_id, c.secret_enc
         FROM backup_runs r LEFT JOIN backup_configs c ON c.id = r.config_id WHERE r.id = ?`,
      )
      .get(runId);
  } catch (e) {
    throw new CliError(`cannot read backup runs from ${dbPath}: ${(e as Error).message}`);
  } finally {
    db.close(true);
  }
  if (!row) throw new CliError(`no backup run ${runId}`);
  if (row.strategy !== "state") throw new CliError(`run ${runId} is a ${row.strategy} backup of an app, not of sundeck's state`);
  if (row.status !== "succeeded" || !row.location)
    throw new CliError(`run ${runId} did not succeed (${row.status}): nothing to restore`);
  const spec = JSON.parse(row.target_json || "{}") as Record<string, unknown>;
  let target: BackupTarget;
  if (row.target_kind === "s3") {
    if (!row.secret_enc) {
      throw new CliError(
        `run ${runId} is in s3 and its config (with the secret key) is gone: download the archive and use --file`,
      );
    }
    let secret: string;
    try {
      secret = createSecrets(deriveKeys(config.master_secret).encryption).open(row.secret_enc);
    } catch {
      throw new CliError("cannot open the s3 secret key of the run's config: master_secret differs from the one that sealed it");
    }
    target = { ...(spec as object), kind: "s3", secret_key: secret } as BackupTarget;
  } else target = { kind: "local" };
  const store = createTarget(target, { localDir: join(config.data_dir, "backups") });
  try {
    const known = {
      id: runId,
      location: row.location,
      sizeBytes: row.size_bytes,
      sha256: row.sha256,
      finishedAt: row.finished_at,
    };
    return {
      data: await store.get(row.location),
      name: `run ${runId} (${row.target_kind} ${row.location})`,
      sha256: row.sha256,
      known,
    };
  } catch (e) {
    throw new CliError(`cannot read run ${runId}: ${(e as Error).message}`);
  }
}

/** Pass bytes through, and fail at the end when their sha256 differs from `expected`. */
function checkedSha256(data: ReadableStream<Uint8Array>, expected: string): ReadableStream<Uint8Array> {
  const h = new Bun.CryptoHasher("sha256");
  return data.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        h.update(chunk);
        c.enqueue(chunk);
      },
      flush() {
        const got = h.digest("hex");
        if (got !== expected) throw new StateRestoreError(`the stored archive's sha256 is ${got}, the run recorded ${expected}`);
      },
    }),
  );
}

/**
 * Restore the database of `config` from `origin`: refuse while a server answers or the database is open elsewhere,
 * unpack and vet the snapshot, keep the current database, swap. `now` names the kept copy.
 */
export async function restoreState(config: Config, origin: StateOrigin, now = Date.now()): Promise<StateRestored> {
  if (await serverAnswers(config)) {
    throw new CliError(
      `a server answers on ${healthUrl(config).replace(/\/api\/health$/, "")}: stop it before restoring its state`,
    );
  }
  const dbPath = dbPathOf(config);
  let data: ReadableStream<Uint8Array>;
  let gzip: boolean;
  let from: string;
  let known: KnownRun | null = null;
  if ("file" in origin) {
    if (!existsSync(origin.file)) throw new CliError(`no file ${origin.file}`);
    gzip = isGzip(origin.file);
    data = Bun.file(origin.file).stream();
    from = origin.file;
  } else {
    const r = await runStream(config, dbPath, origin.runId);
    data = r.sha256 ? checkedSha256(r.data, r.sha256) : r.data;
    // runs are always stored gzipped (the runner compresses every source)
    gzip = true;
    from = r.name;
    known = r.known;
  }
  const tmp = await unpackBeside(dbPath, data, gzip, config.backups.max_restore_bytes).catch((e) => {
    throw new CliError(`cannot restore from ${from}: ${(e as Error).message}`);
  });
  try {
    const info = checkStateFile(tmp);
    const settled = settleRuns(tmp, known, new Date(now).toISOString());
    const { kept, sizeBytes } = replaceDatabase(dbPath, tmp, now);
    return { from, dbPath, kept, sizeBytes, migrations: info.migrations.length, pending: info.pending, settled };
  } catch (e) {
    rmSync(tmp, { force: true });
    if (e instanceof StateRestoreError) throw new CliError(`cannot restore from ${from}: ${e.message}`);
    throw e;
  }
}

/** The lines printed after a restore. */
export function describeRestore(r: StateRestored): string {
  const lines = [`restored ${r.dbPath} from ${r.from} (${r.sizeBytes} bytes, ${r.migrations} migrations)`];
  lines.push(r.kept ? `the previous database is kept as ${r.kept}` : "there was no previous database");
  if (r.settled)
    lines.push(`${r.settled} backup runs in progress when the snapshot was taken were settled (their archives stay)`);
  if (r.pending.length)
    lines.push(`the server applies ${r.pending.length} newer migrations when it starts: ${r.pending.join(", ")}`);
  lines.push("start the server to use it");
  return `${lines.join("\n")}\n`;
}

export default defineCommand({
  meta: { name: "restore-state", description: "Restore the server's database from a state snapshot (server stopped)" },
  args: {
    ...configArg,
    file: { type: "string", description: "snapshot file (.sqlite.gz or .sqlite)", valueHint: "path" },
    run: { type: "string", description: "id of a succeeded state backup run", valueHint: "id" },
  },
  async run({ args }) {
    if (!args.file === !args.run) throw new UsageError("give either --file or --run");
    let origin: StateOrigin;
    if (args.run) {
      if (!/^[1-9]\d{0,15}$/.test(args.run)) throw new UsageError(`--run must be a run id, got ${args.run}`);
      origin = { runId: Number(args.run) };
    } else origin = { file: args.file! };
    const { config } = loadConfig({ path: args.config });
    process.stdout.write(describeRestore(await restoreState(config as Config, origin)));
  },
});
