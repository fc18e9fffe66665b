/**
 * One sync cycle of the worker, and the first contact with a remote. A cycle exports the state into apps_dir and
 * commits it (local wins), fetches when asked, applies remote commits when allowed, pushes when allowed, and marks
 * exactly the activity entries it carried synced or failed.
 */
import type { Ctx } from "../../context";
import type { PendingEntry } from "../activity/sync";
import { type ApplyOutcome, applyRemote } from "./apply";
import type { GitSyncSettings } from "./config";
import { limitsOf } from "./config";
import { writeExport } from "./files/write";
import { type Author, deadline, type GitRepo, GitSyncError, type Refusal } from "./repo";
import type { SyncStatus } from "./status";

/** What a cycle is asked to do. */
export interface CycleRequest {
  /** Fetch and count (poll, webhook, sync-now). */
  fetch: boolean;
  /** Apply remote commits even in fetch-only mode (apply-pending). */
  apply: boolean;
}

const MAX_LISTED = 30;
/** Lines of the process log one cycle writes about what it skipped (the status lists up to 50). */
const MAX_SKIP_LOG = 20;

/** The commit message: a subject and the changes it carries, one per line. */
export function commitMessage(entries: PendingEntry[], subject?: string): string {
  const head =
    subject ??
    (entries.length === 1 ? entries[0].summary : entries.length ? `sundeck: ${entries.length} changes` : "sundeck: update state");
  const lines = entries.slice(0, MAX_LISTED).map((e) => `- ${e.summary} (${e.category} ${e.action}, activity #${e.id})`);
  if (entries.length > MAX_LISTED) lines.push(`- and ${entries.length - MAX_LISTED} more`);
  return `${head.slice(0, 200)}\n\n${lines.join("\n")}\n`;
}

/** The key of the history a local branch belongs to: the remote (no credentials) and the branch. */
export const boundKey = (repo: GitRepo) => `${repo.remoteUrl}#${repo.branch}`;

export interface CycleDeps {
  ctx: Ctx;
  repo: GitRepo;
  cfg: GitSyncSettings;
  status: SyncStatus;
}

const authorOf = (cfg: GitSyncSettings): Author => ({ name: cfg.author_name, email: cfg.author_email });
const messageOf = (e: unknown) => (e instanceof GitSyncError ? e.message : `git sync failed: ${(e as Error).message}`);

/**
 * First contact: an empty remote gets the current state as the initial commit; a remote holding our own history
 * (same remote and branch, local commits present) is continued; any other non-empty remote is refused. Returns
 * whether the worker may run cycles.
 */
export async function attach({ ctx, repo, cfg, status }: CycleDeps): Promise<boolean> {
  const rs = await repo.remoteState();
  if (!rs.reachable) {
    status.failed(rs.error.message);
    return false;
  }
  if (!rs.empty) {
    if (status.boundTo === boundKey(repo) && (await repo.head())) return true;
    status.failed("the remote repository already has commits: git sync starts only on an empty repository (nothing was pushed)");
    return false;
  }
  const entries = ctx.activity.sync.pending();
  try {
    writeExport(ctx, ctx.config.apps_dir);
    const { sha } = await repo.firstPush(commitMessage(entries, "sundeck: initial state"), authorOf(cfg));
    ctx.activity.sync.markSynced(
      entries.map((e) => e.id),
      sha,
    );
    status.synced({ sha, behindBy: 0, boundTo: boundKey(repo) });
    return true;
  } catch (e) {
    status.failed(messageOf(e));
    return false;
  }
}

/** Run one cycle. Errors end up in the status (and on the entries it carried), never thrown. */
export async function runCycle(d: CycleDeps, req: CycleRequest): Promise<void> {
  const { ctx, repo, cfg, status } = d;
  const log = ctx.logs.logger("gitsync");
  const author = authorOf(cfg);
  const entries = ctx.activity.sync.pending();
  const ids = entries.map((e) => e.id);
  let behindBy = 0;
  let applied: ApplyOutcome | null = null;
  const limits = limitsOf(cfg);
  const within = deadline(
    limits.cycleTimeoutMs,
    (what) =>
      new GitSyncError(
        "timeout",
        `the sync cycle ran out of time (${Math.round(limits.cycleTimeoutMs / 1000)} s, git_sync.cycle_timeout) ${what}`,
      ),
  );
  const skipped: Refusal[] = [];
  const fetched = async () => {
    const f = await repo.fetch(within);
    for (const o of f.skipped)
      skipped.push({ path: o.oid ? `object ${o.oid.slice(0, 12)}` : "an object", reason: `${o.type} not fetched: ${o.reason}` });
    return f;
  };
  try {
    writeExport(ctx, ctx.config.apps_dir);
    let committed = await repo.commit("all", commitMessage(entries), author);
    let ahead = committed !== null || status.state === "error";

    const apply = async () => {
      applied = await applyRemote(ctx, repo, author, within);
      skipped.push(...applied.skipped);
      behindBy = 0;
      // the import recorded entries and changed state: export it back and commit, so the push carries the merge
      writeExport(ctx, ctx.config.apps_dir);
      const again = await repo.commit("all", "sundeck: state after applying remote changes", author);
      committed ??= again;
      ahead = true;
    };

    if (req.fetch || req.apply) {
      const f = await fetched();
      behindBy = f.behindBy;
      if (f.aheadBy > 0) ahead = true;
      if (behindBy > 0 && (cfg.auto_apply_enabled || req.apply)) await apply();
    }

    let sha = await repo.head();
    if (cfg.auto_push_enabled && sha) {
      try {
        if (ahead) sha = (await repo.push(within)).sha;
      } catch (e) {
        if (!(e instanceof GitSyncError) || e.code !== "non_fast_forward") throw e;
        // the remote moved on: bring its commits in (when allowed), then push the merge
        const f = await fetched();
        behindBy = f.behindBy;
        if (!(cfg.auto_apply_enabled || req.apply)) {
          // fetch-only: the entries wait (pending) until apply-pending
          status.synced({ sha: status.view(true).last_commit_sha, behindBy });
          return;
        }
        await apply();
        sha = (await repo.push(within)).sha;
      }
      if (sha) ctx.activity.sync.markSynced(ids, sha);
    }
    const outcome = applied as ApplyOutcome | null;
    if (outcome && !outcome.conflicts.length && (outcome.deployed.length || outcome.changed)) status.clearConflicts();
    status.synced({
      sha: cfg.auto_push_enabled ? sha : status.view(true).last_commit_sha,
      behindBy,
      conflicts: outcome?.conflicts,
    });
    if (outcome?.problems.length) status.warn(outcome.problems.join("; "));
  } catch (e) {
    const message = messageOf(e);
    log.warn("git sync cycle failed", { error: message, detail: e instanceof GitSyncError ? e.detail : (e as Error).stack });
    ctx.activity.sync.markFailed(ids, message);
    status.failed(message);
  } finally {
    reportSkipped(skipped, status, log);
  }
}

/** What the cycle left out: on the status (the last cycle's list) and in the process log. */
function reportSkipped(skipped: Refusal[], status: SyncStatus, log: ReturnType<Ctx["logs"]["logger"]>) {
  status.skipped(skipped);
  for (const s of skipped.slice(0, MAX_SKIP_LOG))
    log.warn("git sync skipped what the remote sent", { path: s.path, reason: s.reason });
  if (skipped.length > MAX_SKIP_LOG) log.warn("git sync skipped more", { count: skipped.length - MAX_SKIP_LOG });
}
