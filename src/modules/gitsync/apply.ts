/**
 * Applying what a fetch brought: a local-wins pull whose compose files pass the API deploy's checks first (the
 * app's deploy lock held from that check until its redeploy starts), the redeploys and removals as the git sync
 * actor, the sidecar import, and conflicts and refusals recorded in alert history.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Ctx } from "../../context";
import { alertHistory } from "../../db/schema";
import { iso } from "../../lib/time";
import type { GitSyncConflict } from "../../shared/git-sync";
import { COMPOSE_FILE, ENV_FILE } from "../apps/files";
import { gitSyncActor } from "./files/actor";
import { checkRemoteCompose } from "./files/compose-check";
import { applyImport } from "./files/import-apply";
import { planImport } from "./files/import-plan";
import { ImportRefused, readImport } from "./files/import-read";
import type { Author, Deadline, GitRepo, IncomingChange, Refusal } from "./repo";

/** What an apply did, for the status and the cycle. */
export interface ApplyOutcome {
  conflicts: GitSyncConflict[];
  /** Problems worth showing (refused files, import refusals); the rest applied. */
  problems: string[];
  /** Apps redeployed or taken down. */
  deployed: string[];
  /** The pull made a merge commit, or the import changed state: there is something to commit and push. */
  changed: boolean;
  /** What the pull left out of the remote's commits (unsafe entries, oversized files, a commit as a whole). */
  skipped: Refusal[];
}

/** Alert history kinds of what git sync records there. */
export const CONFLICT_KIND = "git_sync_conflict";
export const REFUSED_KIND = "git_sync_refused";

const slugOf = (path: string) => (path.includes("/") ? path.slice(0, path.indexOf("/")) : null);
const isAppFile = (path: string) => path.endsWith(`/${COMPOSE_FILE}`) || path.endsWith(`/${ENV_FILE}`);

function readOr(dir: string, rel: string): string {
  try {
    return readFileSync(join(dir, rel), "utf8");
  } catch {
    return "";
  }
}

/** Record one git sync event in alert history (no rule: it is shown, never notified). */
function history(ctx: Ctx, kind: string, slug: string | null, subject: string, message: string) {
  ctx.db.orm
    .insert(alertHistory)
    .values({
      ruleId: null,
      appSlug: slug,
      kind,
      subject,
      state: "firing",
      value: null,
      message,
      createdAt: iso(ctx.clock.now()),
    })
    .run();
}

/** Pull the fetched remote commits into apps_dir, local winning, and make the result live. */
export async function applyRemote(ctx: Ctx, repo: GitRepo, author: Author, deadline?: Deadline): Promise<ApplyOutcome> {
  const appsDir = ctx.config.apps_dir;
  const log = ctx.logs.logger("gitsync");
  const held = new Map<string, () => void>();
  const out: ApplyOutcome = { conflicts: [], problems: [], deployed: [], changed: false, skipped: [] };
  const actor = gitSyncActor(author.name === "sundeck" ? "git-sync" : `git-sync (${author.name})`);

  // sees every incoming change before any is written: compose and .env of an app must pass the deploy checks
  const vet = async (changes: IncomingChange[]) => {
    const refused: { path: string; reason: string }[] = [];
    const bySlug = new Map<string, IncomingChange[]>();
    for (const c of changes) {
      const slug = slugOf(c.path);
      if (slug && isAppFile(c.path)) bySlug.set(slug, [...(bySlug.get(slug) ?? []), c]);
    }
    for (const [slug, list] of bySlug) {
      if (!held.has(slug)) held.set(slug, await ctx.deployer.locks.acquire(slug));
      const pick = (file: string) => {
        const c = list.find((x) => x.path === `${slug}/${file}`);
        return c ? (c.content ? new TextDecoder().decode(c.content) : null) : readOr(appsDir, `${slug}/${file}`);
      };
      const compose = pick(COMPOSE_FILE);
      if (compose === null || compose === "") continue; // the app goes away: nothing to check
      const verdict = checkRemoteCompose(ctx, slug, compose, pick(ENV_FILE) ?? "");
      if (verdict.ok) continue;
      for (const c of list) refused.push({ path: c.path, reason: verdict.message });
    }
    return refused;
  };

  try {
    const r = await repo.pullLocalWins({ author, vet, deadline });
    out.changed = r.merged;
    out.skipped = r.skipped;
    const now = iso(ctx.clock.now());
    for (const path of r.conflicts) {
      const message = `git sync conflict: ${path} was changed here and on the remote; the local version was kept`;
      out.conflicts.push({ path, message, detected_at: now, commit_sha: r.head });
      history(ctx, CONFLICT_KIND, slugOf(path), path, message);
    }
    const refusedSlugs = new Set<string>();
    for (const f of r.refused) {
      const slug = slugOf(f.path);
      if (slug && refusedSlugs.has(slug)) continue;
      if (slug) refusedSlugs.add(slug);
      const message = `git sync refused ${f.path} from the remote: ${f.reason}`;
      out.problems.push(message);
      history(ctx, REFUSED_KIND, slug, f.path, message);
    }
    if (r.ignored.length) log.warn("git sync ignored remote paths outside the allowed files", { paths: r.ignored.join(",") });

    // redeploy (or take down) every app whose compose or .env came from the remote, holding the lock from the check
    const touched = new Set(r.applied.filter(isAppFile).map((p) => slugOf(p)!));
    for (const slug of touched) {
      const release = held.get(slug) ?? (await ctx.deployer.locks.acquire(slug));
      held.delete(slug);
      try {
        if (ctx.appFiles.read(slug)) await ctx.deployer.deployFromFiles(slug, { actor, source: "git_sync" }, release);
        else ctx.deployer.teardown(slug, actor, release);
        out.deployed.push(slug);
      } catch (e) {
        out.problems.push(`git sync could not deploy ${slug}: ${(e as Error).message}`);
      }
    }
  } finally {
    for (const release of held.values()) release();
  }

  // the sidecars and _global.yml: through the services, as the git sync actor
  try {
    const plan = planImport(ctx, readImport(appsDir));
    const res = applyImport(ctx, plan, actor);
    if (res.applied.length) out.changed = true;
    for (const f of res.failed) out.problems.push(`git sync could not apply ${f.change.summary}: ${f.error}`);
    for (const f of plan.refused) log.info("git sync import refused a change", { file: f.file, what: f.what, reason: f.reason });
  } catch (e) {
    if (!(e instanceof ImportRefused)) throw e;
    out.problems.push(e.message);
  }
  return out;
}
