/**
 * `sundeck git status|sync-now|apply-pending`: the git sync worker as the server reports it (state, behind by N, last
 * sync, last commit, last error, conflicts), and the two requests that make it work now. Both requests are accepted
 * (202) and done in the background; unless `--detach`, the command reads the status until that work has shown in it
 * and fails (exit 1) when it ended in an error or a conflict. Ctrl-C while waiting leaves the work running, exit 130.
 */
import { defineCommand } from "citty";
import type { Api } from "../client/api";
import { ago, outputFormat, printJson } from "../client/output";
import { Progress } from "../client/progress";
import { conflictText, type GitSyncStatus, gitStateText, shortSha } from "../shared/git-sync";
import { pollUntil } from "./backup";
import { CliError } from "./errors";
import { UsageError } from "./exit";
import { connect, contextArg, detachArg, outputArg } from "./remote";

/** How often the status is read while waiting. */
export const GIT_POLL_MS = 500;

const timeoutArg = {
  timeout: { type: "string", description: "seconds to wait for the work to show (default 120)", default: "120", valueHint: "s" },
} as const;

const statusOf = (api: Api) => api.get<GitSyncStatus>("/git/status");

/** The status as lines of text (what `git status` prints). */
export function statusLines(s: GitSyncStatus, now = Date.now()): string[] {
  if (!s.enabled) return ["git sync: disabled (a super-admin enables it in the dashboard's Git Sync page or in git_sync)"];
  const lines = [`git sync: ${gitStateText(s)}${s.running ? " (syncing now)" : ""}`];
  lines.push(`last sync: ${s.last_sync_at ? `${ago(s.last_sync_at, now)} (${s.last_sync_at})` : "never"}`);
  if (s.last_attempt_at && s.last_attempt_at !== s.last_sync_at)
    lines.push(`last attempt: ${ago(s.last_attempt_at, now)} (${s.last_attempt_at})`);
  lines.push(`last commit: ${shortSha(s.last_commit_sha) ?? "none"}`);
  if (s.state === "behind" || s.behind_by > 0)
    lines.push(`behind by: ${s.behind_by} (apply them with: sundeck git apply-pending)`);
  if (s.last_error) lines.push(`last error: ${s.last_error}`);
  for (const c of s.conflicts ?? []) lines.push(`conflict: ${conflictText(c)}`);
  for (const k of s.skipped ?? []) lines.push(`skipped from the remote: ${k.path}: ${k.reason}`);
  return lines;
}

/**
 * Whether `after` shows a sync or apply that ended after `before` was read. `sawRunning`: a read in between showed
 * the worker running (a failure that repeats the last error changes nothing else).
 */
export function settled(before: GitSyncStatus, after: GitSyncStatus, sawRunning = false): boolean {
  if (after.running) return false;
  if (after.last_attempt_at && after.last_attempt_at !== before.last_attempt_at) return true;
  if (sawRunning || after.last_sync_at !== before.last_sync_at) return true;
  // a failed attempt leaves the last successful sync time as it was; its error is what changes
  return !!after.last_error && after.last_error !== before.last_error;
}

/** The outcome of finished work: a CliError for an error or a conflict; else the status line. */
export function outcomeOf(what: string, s: GitSyncStatus): string {
  if (s.state === "error") throw new CliError(`${what} failed: ${s.last_error ?? "no reason given"}`);
  if (s.state === "conflict") {
    const list = (s.conflicts ?? []).map(conflictText).join("; ");
    throw new CliError(`${what}: conflict, local state kept${list ? `: ${list}` : s.last_error ? `: ${s.last_error}` : ""}`);
  }
  return `${what} done: ${gitStateText(s)}${s.last_commit_sha ? ` at ${shortSha(s.last_commit_sha)}` : ""}`;
}

function timeoutOf(value: string | undefined): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 3600) throw new UsageError("--timeout must be a number of seconds from 1 to 3600");
  return n * 1000;
}

/** POST `path`, then (unless detached) wait for its result in the status. */
async function request(args: { context?: string; detach: boolean; timeout?: string }, path: string, what: string) {
  const timeoutMs = timeoutOf(args.timeout);
  const api = connect(args);
  const before = await statusOf(api);
  if (!before.enabled) throw new CliError("git sync is disabled on this server");
  const res = await api.open("POST", path);
  // 200: nothing to do (apply-pending when already up to date)
  const immediate = res.status === 200;
  await res.body?.cancel();
  if (args.detach) return void process.stdout.write(`${what} accepted; see it with: sundeck git status\n`);
  if (immediate) return void process.stdout.write(`${what}: already up to date\n`);
  const progress = new Progress();
  progress.start(what === "sync" ? "syncing" : "applying pending commits");
  const deadline = Date.now() + timeoutMs;
  let sawRunning = false;
  try {
    const after = await pollUntil(
      () => statusOf(api),
      (s) => settled(before, s, sawRunning) || Date.now() > deadline,
      {
        pollMs: GIT_POLL_MS,
        onValue: (s) => {
          sawRunning ||= !!s.running;
        },
        interrupted: `interrupted: the ${what} goes on on the server; see it with: sundeck git status`,
      },
    );
    progress.stop();
    if (!settled(before, after, sawRunning))
      throw new CliError(`the ${what} did not finish within ${timeoutMs / 1000}s; see it with: sundeck git status`);
    process.stdout.write(`${outcomeOf(what, after)}\n`);
  } finally {
    progress.stop();
  }
}

const status = defineCommand({
  meta: { name: "status", description: "Show the git sync worker: state, behind by N, last sync, last commit, last error" },
  args: { ...outputArg, ...contextArg },
  async run({ args }) {
    const format = outputFormat(args.output);
    const s = await statusOf(connect(args));
    if (format === "json") return printJson(s);
    process.stdout.write(`${statusLines(s).join("\n")}\n`);
  },
});

const syncNow = defineCommand({
  meta: { name: "sync-now", description: "Fetch from the remote, apply (unless fetch-only) and push now, and wait for it" },
  args: { ...detachArg, ...timeoutArg, ...contextArg },
  run: ({ args }) => request(args, "/git/sync-now", "sync"),
});

const applyPending = defineCommand({
  meta: { name: "apply-pending", description: "Apply the remote commits a fetch-only sync counted, and wait for it" },
  args: { ...detachArg, ...timeoutArg, ...contextArg },
  run: ({ args }) => request(args, "/git/apply-pending", "apply"),
});

export default defineCommand({
  meta: { name: "git", description: "Git sync: status, sync-now, apply-pending" },
  subCommands: { status, "sync-now": syncNow, "apply-pending": applyPending },
});
