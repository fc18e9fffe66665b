/**
 * The git repository behind git sync: `apps_dir` as the work tree, a remote `origin`, and the operations the sync
 * worker needs (first push, commit, push, fetch, local-wins pull). Only paths the caller's `allowed` policy admits are
 * ever committed or written; every operation runs alone (one queue per repository).
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { GitSyncError } from "./errors";
import { aheadBehind } from "./graph";
import { httpTransport } from "./http-transport";
import { gitFs as fs, loadGit, type RepoPaths } from "./igit";
import { DEFAULT_LIMITS, deadline } from "./limits";
import { commitPaths, type Local, resolveRef } from "./local";
import { SerialQueue } from "./lock";
import { pullLocalWins } from "./pull";
import { parseRemote } from "./remote";
import { sshTransport } from "./ssh-transport";
import { DEFAULT_TIMEOUT_MS, type Transport } from "./transport";
import type { GitRepo, OpenOptions, RemoteState } from "./types";

const timedOut = (what: string) => new GitSyncError("timeout", `git sync ran out of time ${what}`);

const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/$)[A-Za-z0-9._/-]+$/;

/** Open (initialising if needed) the repository of `workTree` and point `origin` at the remote. */
export async function openRepo(o: OpenOptions): Promise<GitRepo> {
  const spec = parseRemote(o.remote);
  const branch = o.branch || "main";
  if (!BRANCH.test(branch)) throw new GitSyncError("failed", "the branch name is not valid");
  const paths: RepoPaths = { dir: o.workTree, gitdir: o.gitDir };
  const git = await loadGit();
  const l: Local = {
    git,
    paths,
    ref: `refs/heads/${branch}`,
    tracking: `refs/remotes/origin/${branch}`,
    allowed: o.allowed,
    maxDepth: o.maxDepth ?? 2,
    limits: o.limits ?? DEFAULT_LIMITS,
  };

  mkdirSync(o.workTree, { recursive: true, mode: 0o700 });
  if (!existsSync(join(o.gitDir, "HEAD"))) {
    mkdirSync(dirname(o.gitDir), { recursive: true, mode: 0o700 });
    await git.init({ fs, ...paths, defaultBranch: branch });
  }
  await git.writeRef({ fs, gitdir: o.gitDir, ref: "HEAD", value: l.ref, symbolic: true, force: true });
  // lets a person inspect it with `git --git-dir=<gitDir> status`
  await git.setConfig({ fs, gitdir: o.gitDir, path: "core.worktree", value: o.workTree });
  await git.addRemote({ fs, gitdir: o.gitDir, remote: "origin", url: spec.url, force: true });

  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const transport: Transport =
    spec.transport === "ssh"
      ? sshTransport(paths, spec, o.auth, timeoutMs, l.limits)
      : httpTransport(paths, spec, o.auth, timeoutMs, l.limits);
  const queue = new SerialQueue();

  return {
    transport: spec.transport,
    remoteUrl: spec.url,
    branch,

    remoteState: () =>
      queue.run(async (): Promise<RemoteState> => {
        try {
          const refs = await transport.listRefs(l.ref);
          return { reachable: true, empty: refs.length === 0, branchSha: refs.find((r) => r.ref === l.ref)?.oid ?? null };
        } catch (e) {
          if (e instanceof GitSyncError) return { reachable: false, error: e };
          throw e;
        }
      }),

    firstPush: (message, author) =>
      queue.run(async () => {
        if ((await transport.listRefs()).length)
          throw new GitSyncError(
            "remote_not_empty",
            "the remote repository already has commits: git sync starts only on an empty repository (nothing was pushed)",
          );
        await commitPaths(l, "all", message, author, true);
        await transport.push(branch);
        return { sha: (await resolveRef(l, l.ref))! };
      }),

    commit: (which, message, author) => queue.run(() => commitPaths(l, which, message, author)),

    push: (within) =>
      queue.run(async () => {
        const head = await resolveRef(l, l.ref);
        if (head) await transport.push(branch, within);
        return { sha: head };
      }),

    fetch: (within) =>
      queue.run(async () => {
        const d = within ?? deadline(Math.min(timeoutMs, l.limits.cycleTimeoutMs), timedOut);
        const { tip, skipped } = await transport.fetch(branch, d);
        const { ahead, behind } = await aheadBehind(paths, await resolveRef(l, l.ref), tip, l.limits);
        return { behindBy: behind, aheadBy: ahead, remoteSha: tip, skipped };
      }),

    pullLocalWins: (opts) => queue.run(() => pullLocalWins(l, opts)),

    head: () => resolveRef(l, l.ref),

    idle: () => queue.idle(),
  };
}
