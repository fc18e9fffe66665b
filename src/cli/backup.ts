/**
 * `sundeck backup list|run|download|restore`: an app's backup configs and runs, a run started and followed to its end
 * (its progress polled from the run list; the API has no stream for it), a stored archive downloaded and checked
 * against the sha256 the server recorded, and a restore from a run or from a file, followed to its end. Ctrl-C while
 * following leaves the work running on the server and exits 130.
 */
import { defineCommand } from "citty";
import type { Api } from "../client/api";
import { ago, outputFormat, printJson, printTable } from "../client/output";
import { Progress } from "../client/progress";
import { BACKUP_STRATEGIES, type BackupConfig, type BackupRestore, type BackupRun } from "../shared/backups";
import { fileNameOf, findRun, openDownload, saveBody, uploadRestore } from "./backup-transfer";
import { CliError } from "./errors";
import { Interrupted, UsageError } from "./exit";
import { appPath, confirm, connect, contextArg, detachArg, outputArg, slugArg } from "./remote";

/** How often a followed run or restore is read again. */
export const FOLLOW_POLL_MS = 1000;

const appPositional = {
  app: { type: "positional", description: "app name (slug)", required: false, valueHint: "slug" },
} as const;

/** A size in binary units for lines and tables. */
export function sizeText(n: number | null | undefined): string {
  if (n == null) return "";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** How long something with a start and an optional end took (or has run), in seconds or minutes. */
export function tookText(started: string, finished: string | null, now = Date.now()): string {
  const ms = (finished ? Date.parse(finished) : now) - Date.parse(started);
  if (!Number.isFinite(ms) || ms < 0) return "";
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

/** "in 5h" style wait until an RFC 3339 time ("due" once it has passed; "-" for none). */
export function untilText(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "-";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((t - now) / 1000);
  if (s <= 0) return "due";
  if (s < 60) return `in ${s}s`;
  if (s < 3600) return `in ${Math.floor(s / 60)}m`;
  if (s < 86400) return `in ${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? `${Math.floor((s % 3600) / 60)}m` : ""}`;
  return `in ${Math.floor(s / 86400)}d`;
}

/** A config's target in a few words. */
const targetText = (c: BackupConfig) =>
  c.target.kind === "local"
    ? "local"
    : `s3 ${[c.target.bucket, c.target.prefix.replace(/^\/+|\/+$/g, "")].filter(Boolean).join("/")}`;

/** A run's outcome in one line: "run 12 (db postgres) succeeded: 1.2 MiB in 3.4s, sha256 ab12…". */
export function runLine(r: BackupRun, now = Date.now()): string {
  const what = `run ${r.id} (${r.service ?? "sundeck"} ${r.strategy})`;
  const took = tookText(r.started_at, r.finished_at, now);
  if (r.status === "running") return `${what} running: ${sizeText(r.progress_bytes ?? 0)} written, ${took}`;
  if (r.status === "failed") return `${what} failed after ${took}: ${r.error ?? "no reason given"}`;
  return `${what} succeeded: ${sizeText(r.size_bytes)} in ${took}${r.sha256 ? `, sha256 ${r.sha256.slice(0, 12)}` : ""}`;
}

/** Read `read()` every `pollMs` until `done` holds for what it returns; Ctrl-C ends the wait with `interrupted`. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (v: T) => boolean,
  opts: { pollMs?: number; onValue?: (v: T) => void; interrupted: string },
): Promise<T> {
  let stop = false;
  const onSigint = () => {
    stop = true;
  };
  process.on("SIGINT", onSigint);
  try {
    for (;;) {
      const v = await read();
      opts.onValue?.(v);
      if (done(v)) return v;
      if (stop) throw new Interrupted(opts.interrupted);
      await Bun.sleep(opts.pollMs ?? FOLLOW_POLL_MS);
      if (stop) throw new Interrupted(opts.interrupted);
    }
  } finally {
    process.off("SIGINT", onSigint);
  }
}

const configsOf = (api: Api, slug: string) => api.get<BackupConfig[]>(appPath(slug, "/backups/configs"));
const runsOf = (api: Api, slug: string, limit = 50) => api.get<BackupRun[]>(appPath(slug, `/backups/runs?limit=${limit}`));

const list = defineCommand({
  meta: { name: "list", description: "List an app's backup configs and recent runs" },
  args: {
    ...appPositional,
    limit: { type: "string", description: "runs to show (default 20)", default: "20", valueHint: "n" },
    ...outputArg,
    ...contextArg,
  },
  async run({ args }) {
    const format = outputFormat(args.output);
    const slug = slugArg(args.app, "<app>");
    const limit = Number(args.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500)
      throw new UsageError("--limit must be a whole number from 1 to 500");
    const api = connect(args);
    const [configs, runs] = await Promise.all([configsOf(api, slug), runsOf(api, slug, limit)]);
    if (format === "json") return printJson({ configs, runs });
    const w = (s: string) => process.stdout.write(`${s}\n`);
    if (!configs.length) w(`no backup configs for ${slug}`);
    else
      printTable(
        ["id", "service", "strategy", "target", "schedule", "next run", "keeps", "enabled"],
        configs.map((c) => [
          c.id,
          c.service,
          c.strategy,
          targetText(c),
          c.schedule ? `${c.schedule}${c.timezone ? ` ${c.timezone}` : ""}` : "by hand",
          c.enabled ? untilText(c.next_run_at) : "disabled",
          [c.retention_count != null && `last ${c.retention_count}`, c.retention_days != null && `${c.retention_days}d`]
            .filter(Boolean)
            .join(", ") || "all",
          c.enabled ? "yes" : "no",
        ]),
      );
    w("");
    if (!runs.length) return w("no runs yet");
    printTable(
      ["run", "config", "service", "strategy", "status", "trigger", "started", "took", "size", "sha256", "error"],
      runs.map((r) => [
        r.id,
        r.config_id,
        r.service,
        r.strategy,
        r.status === "running" ? `running ${sizeText(r.progress_bytes ?? 0)}` : r.status,
        r.trigger,
        ago(r.started_at),
        tookText(r.started_at, r.finished_at),
        sizeText(r.size_bytes),
        r.sha256 ? r.sha256.slice(0, 12) : null,
        r.error,
      ]),
    );
  },
});

/** Follow runs to their end, a status line on a terminal; throws a CliError naming the failed ones. */
export async function followRuns(api: Api, slug: string, ids: number[], pollMs = FOLLOW_POLL_MS): Promise<BackupRun[]> {
  const progress = new Progress();
  progress.start(`backing up ${slug}`);
  try {
    const runs = await pollUntil(
      async () => (await runsOf(api, slug, 100)).filter((r) => ids.includes(r.id)),
      (rs) => ids.every((id) => rs.some((r) => r.id === id && r.status !== "running")),
      {
        pollMs,
        onValue: (rs) => {
          const bytes = rs.reduce((n, r) => n + (r.status === "running" ? (r.progress_bytes ?? 0) : 0), 0);
          progress.start(`backing up ${slug}: ${sizeText(bytes)} written`);
        },
        interrupted: `interrupted: the backup of ${slug} goes on on the server; see it with: sundeck backup list ${slug}`,
      },
    );
    progress.stop();
    for (const r of runs) process.stdout.write(`${runLine(r)}\n`);
    const failed = runs.filter((r) => r.status === "failed");
    if (failed.length)
      throw new CliError(failed.map((r) => `backup run ${r.id} of ${slug} failed: ${r.error ?? "no reason given"}`).join("; "));
    return runs;
  } finally {
    progress.stop();
  }
}

const run = defineCommand({
  meta: { name: "run", description: "Run an app's backups now (every config, or --config) and follow them to the end" },
  args: {
    ...appPositional,
    config: { type: "string", description: "only this config (see sundeck backup list)", valueHint: "id" },
    ...detachArg,
    ...contextArg,
  },
  async run({ args }) {
    const slug = slugArg(args.app, "<app>");
    const api = connect(args);
    const configs = await configsOf(api, slug);
    let chosen = configs;
    if (args.config !== undefined) {
      chosen = configs.filter((c) => String(c.id) === args.config);
      if (!chosen.length) throw new CliError(`${slug} has no backup config ${args.config} (see sundeck backup list ${slug})`);
    }
    if (!chosen.length) throw new CliError(`${slug} has no backup configs: add one in the dashboard's Backups tab`);
    const ids: number[] = [];
    for (const c of chosen) {
      const r = await api.post<{ run_id: number }>(`/backups/configs/${c.id}/run`);
      ids.push(r.run_id);
      if (args.detach) process.stdout.write(`backup run ${r.run_id} of ${slug} (${c.service} ${c.strategy}) started\n`);
    }
    if (args.detach) return void process.stdout.write(`follow with: sundeck backup list ${slug}\n`);
    await followRuns(api, slug, ids);
  },
});

const download = defineCommand({
  meta: { name: "download", description: "Download a run's archive and check its sha256 against the recorded one" },
  args: {
    run: { type: "positional", description: "run id (see sundeck backup list)", required: true, valueHint: "id" },
    output: { type: "string", alias: "o", description: "file to write (default: the archive's name; - for stdout)" },
    app: { type: "string", description: "the run's app (spares looking through every app for the run)", valueHint: "slug" },
    ...contextArg,
  },
  async run({ args }) {
    if (!/^\d{1,12}$/.test(args.run)) throw new UsageError("<run> must be a run id (a number)");
    const id = Number(args.run);
    const slug = args.app === undefined ? undefined : slugArg(args.app, "--app");
    const api = connect(args);
    const recorded = await findRun(api, id, slug);
    const res = await openDownload(api, id);
    const dest = args.output ?? fileNameOf(res, `backup-${id}.gz`);
    const progress = new Progress(process.stderr);
    progress.start(`downloading run ${id}`);
    let got: Awaited<ReturnType<typeof saveBody>>;
    try {
      got = await saveBody(res, dest, (n) => progress.start(`downloading run ${id}: ${sizeText(n)}`));
    } finally {
      progress.stop();
    }
    const where = dest === "-" ? "stdout" : dest;
    const say = (s: string) => process.stderr.write(`${s}\n`);
    if (!recorded?.sha256) {
      const why = recorded ? `the server recorded no sha256 for run ${id}` : `run ${id} is in no run list this key can read`;
      say(`wrote ${sizeText(got.bytes)} to ${where}, sha256 ${got.sha256} (not verified: ${why})`);
      return;
    }
    if (recorded.sha256 !== got.sha256)
      throw new CliError(
        `sha256 mismatch for run ${id}: got ${got.sha256}, the server recorded ${recorded.sha256}${dest === "-" ? "" : ` (${dest} kept for inspection)`}`,
      );
    say(`wrote ${sizeText(got.bytes)} to ${where}, sha256 ${got.sha256} verified against run ${id}`);
  },
});

/** Follow a restore to its end; throws a CliError when it failed. */
export async function followRestore(api: Api, slug: string, id: number, pollMs = FOLLOW_POLL_MS): Promise<BackupRestore> {
  const progress = new Progress();
  progress.start(`restoring ${slug}`);
  try {
    const r = await pollUntil(
      async () => (await api.get<BackupRestore[]>(appPath(slug, "/backups/restores?limit=100"))).find((x) => x.id === id),
      (x) => x !== undefined && x.status !== "running",
      {
        pollMs,
        interrupted: `interrupted: restore ${id} of ${slug} goes on on the server; see it in the dashboard's Backups tab`,
      },
    );
    const done = r as BackupRestore;
    if (done.status === "failed") throw new CliError(`restore ${id} of ${slug} failed: ${done.error ?? "no reason given"}`);
    return done;
  } finally {
    progress.stop();
  }
}

const restore = defineCommand({
  meta: { name: "restore", description: "Restore an app's data from a run (--run) or from a file (--file --strategy)" },
  args: {
    ...appPositional,
    run: { type: "string", description: "restore this stored run", valueHint: "id" },
    file: { type: "string", description: "restore this archive (up to 32 MiB)", valueHint: "path" },
    strategy: { type: "string", description: `with --file: ${BACKUP_STRATEGIES.join(", ")}`, valueHint: "name" },
    container: { type: "string", description: "with --file: the container to restore into", valueHint: "name" },
    yes: { type: "boolean", alias: "y", description: "do not ask for confirmation", default: false },
    ...detachArg,
    ...contextArg,
  },
  async run({ args }) {
    const slug = slugArg(args.app, "<app>");
    if ((args.run === undefined) === (args.file === undefined)) throw new UsageError("give either --run ID or --file PATH");
    if (args.run !== undefined && !/^\d{1,12}$/.test(args.run)) throw new UsageError("--run must be a run id (a number)");
    if (args.file !== undefined && !args.strategy) throw new UsageError("--file needs --strategy");
    if (args.strategy !== undefined && !(BACKUP_STRATEGIES as readonly string[]).includes(args.strategy))
      throw new UsageError(`--strategy must be one of ${BACKUP_STRATEGIES.join(", ")}`);
    if (args.run !== undefined && (args.strategy !== undefined || args.container !== undefined))
      throw new UsageError("--strategy and --container go with --file; a run restores into its own service");
    const api = connect(args);
    // fail on an unknown app before asking anything
    await api.get(appPath(slug));
    const from = args.run !== undefined ? `run ${args.run}` : `${args.file} (${args.strategy})`;
    if (!args.yes && process.stdin.isTTY && process.stderr.isTTY) {
      if (!(await confirm(`restore ${slug} on ${api.where} from ${from}? its current data is replaced`)))
        throw new CliError("not restored");
    }
    const { restore_id } =
      args.run !== undefined
        ? await api.post<{ restore_id: number }>(`/backups/runs/${args.run}/restore`)
        : await uploadRestore(api, slug, args.file as string, args.strategy as string, args.container);
    if (args.detach) return void process.stdout.write(`restore ${restore_id} of ${slug} from ${from} started\n`);
    const r = await followRestore(api, slug, restore_id);
    process.stdout.write(
      `restored ${slug} from ${from} (restore ${restore_id}${r.bytes != null ? `, ${sizeText(r.bytes)}` : ""})\n`,
    );
  },
});

export default defineCommand({
  meta: { name: "backup", description: "Back up and restore an app's data: list, run, download, restore" },
  subCommands: { list, run, download, restore },
});
