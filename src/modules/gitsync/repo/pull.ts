/**
 * The local-wins pull: plan the merge of the fetched remote branch (merge.ts), let `vet` refuse incoming files, write
 * the accepted ones to the work tree, then fast-forward or make a merge commit (parents: local, remote) so the next
 * push is a fast-forward. Works on what the last fetch brought. What the remote sent is read by the bounded walk:
 * an unsafe entry is skipped, a file over the size limit keeps the local content, and a remote commit that cannot be
 * judged whole brings none of its changes (the merge keeps the local tree), so syncing goes on either way and the
 * remote's bad entries never reach our commits.
 */
import { mergeBase } from "./graph";
import { gitFs as fs } from "./igit";
import { deadline } from "./limits";
import { type Local, managed, readWork, resolveRef, syncIndex, workFiles } from "./local";
import { type MergePlan, planLocalWins } from "./merge";
import { readBounded } from "./objects";
import { readSkipped, size } from "./pack-ingest";
import { removeRel, writeRel } from "./paths";
import { type Refusal, readCommitInfo, walkCommit } from "./tree-walk";
import { type FlatTree, isRegular, sameEntry, writeFlat } from "./trees";
import type { Author, IncomingChange, PullOptions, PullResult } from "./types";

/** Bring `refs/remotes/origin/<branch>` into the branch and the work tree, the local side winning conflicts. */
export async function pullLocalWins(l: Local, opts: PullOptions & { deadline?: import("./limits").Deadline } = {}) {
  const { git, paths, limits } = l;
  const d = opts.deadline ?? deadline(limits.cycleTimeoutMs, (what) => new Error(`git sync ran out of time ${what}`));
  const local = await resolveRef(l, l.ref);
  const remote = await resolveRef(l, l.tracking);
  const none: PullResult = { applied: [], conflicts: [], refused: [], ignored: [], skipped: [], head: local, merged: false };
  if (!remote || remote === local) return none;
  const base = await mergeBase(paths, local, remote, limits);
  if (base === remote) return none;

  const [baseW, localW, remoteW] = [
    await walkCommit(paths.gitdir, base, limits, d),
    await walkCommit(paths.gitdir, local, limits, d),
    await walkCommit(paths.gitdir, remote, limits, d),
  ];
  const skipped: Refusal[] = [...remoteW.refusals];
  const baseTree = baseW.problem ? new Map() : baseW.tree;
  const localTree = localW.problem ? new Map() : localW.tree;
  // a remote commit that cannot be judged whole changes nothing: as if it kept the base
  let remoteTree: FlatTree = remoteW.tree;
  if (remoteW.problem) {
    skipped.push({ path: `commit ${remote.slice(0, 12)}`, reason: `not applied: ${remoteW.problem}` });
    remoteTree = new Map(baseTree);
  }
  const contents = await keepOutUnreadable(l, baseTree, remoteTree, skipped);

  const work = await readWork(l, new Set([...workFiles(l), ...baseTree.keys(), ...localTree.keys(), ...remoteTree.keys()]));
  const plan = planLocalWins({ base: baseTree, local: localTree, remote: remoteTree, work, allowed: l.allowed });
  const refused = await vetPlan(plan, opts, localTree, contents);

  for (const w of plan.writes) {
    if (w.entry) writeRel(paths.dir, w.path, contents.get(w.entry.oid)!, w.entry.mode === "100755");
    else removeRel(paths.dir, w.path);
  }

  const mergedTree = await writeFlat(paths, plan.merged);
  let head: string;
  let merged = false;
  const remoteInfo = await readCommitInfo(paths.gitdir, remote, limits);
  if ((base === local || !local) && !remoteW.problem && mergedTree === remoteInfo?.tree) {
    await git.writeRef({ fs, gitdir: paths.gitdir, ref: l.ref, value: remote, force: true });
    head = remote;
  } else {
    const kept = [...plan.conflicts, ...refused.map((r) => r.path)];
    const message = kept.length
      ? `Merge remote changes (local kept: ${kept.slice(0, 10).join(", ")}${kept.length > 10 ? ", …" : ""})`
      : "Merge remote changes";
    const author = opts.author ?? (await lastAuthor(l, local));
    const parent = local ? [local, remote] : [remote];
    head = await git.commit({ fs, ...paths, message, author, committer: author, tree: mergedTree, parent, ref: l.ref });
    merged = true;
  }
  const touched = new Set([...localTree.keys(), ...plan.merged.keys()]);
  await syncIndex(
    l,
    plan.merged,
    [...touched].filter((p) => !sameEntry(localTree.get(p), plan.merged.get(p))),
  );
  return {
    applied: plan.writes.map((w) => w.path),
    conflicts: plan.conflicts,
    refused,
    ignored: plan.ignored,
    skipped,
    head,
    merged,
  };
}

/**
 * Bytes of incoming files one pull holds (for `vet` and the writes, all at once): each file is within
 * max_file_bytes, but a commit of 300 apps with a 1 MiB `.env` each (a few KiB of pack) held 466 MiB. Files past it
 * keep their local content, as a file over the limit does; at least one file of max_file_bytes always fits.
 */
const INCOMING_BYTES = 16 * 1024 * 1024;
/** Files looked at between two turns of the event loop (30,000 of them held it 2 s). */
const LOOK_BATCH = 256;

/**
 * Read every file the remote changed at a managed path, within the file limit and the pull's budget; one over either,
 * or missing (skipped by the fetch), is reported and taken out of the remote side (as if unchanged), so the local
 * content stays. The contents read, by id, for the writes.
 */
async function keepOutUnreadable(l: Local, base: FlatTree, remote: FlatTree, skipped: Refusal[]) {
  const contents = new Map<string, Uint8Array>();
  const budget = Math.max(INCOMING_BYTES, l.limits.maxBlobBytes);
  let held = 0;
  let looked = 0;
  let why: Record<string, string> | null = null;
  for (const [p, e] of [...remote]) {
    if (!managed(l, p) || !isRegular(e) || sameEntry(e, base.get(p)) || contents.has(e.oid)) continue;
    // reads are synchronous and each leaves its inflated header behind: the proxy's turn, and a collection, now and then
    if (++looked % LOOK_BATCH === 0) {
      await new Promise<void>((r) => setImmediate(r));
      Bun.gc(true);
    }
    // the header says the size: a file past the budget is never inflated
    const found = await readBounded(l.paths.gitdir, e.oid, Math.min(l.limits.maxBlobBytes, budget - held));
    if (found.kind === "ok" && found.type === "blob") {
      contents.set(e.oid, found.content);
      held += found.content.length;
      continue;
    }
    why ??= readSkipped(l.paths.gitdir);
    const reason =
      found.kind === "too_big" && found.size <= l.limits.maxBlobBytes
        ? `the pull already holds ${size(held)} of incoming files, its limit (${size(budget)} in all)`
        : found.kind === "too_big"
          ? `${size(found.size)}, over the ${size(l.limits.maxBlobBytes)} file limit (git_sync.max_file_bytes)`
          : `not fetched (${why[e.oid] ?? "missing from the remote's pack"})`;
    skipped.push({ path: p, reason: `${reason}: local content kept` });
    const b = base.get(p);
    if (b) remote.set(p, b);
    else remote.delete(p);
  }
  return contents;
}

/** Ask `vet` about the writes; refused ones leave the plan (the local entry goes back into the merge tree). */
async function vetPlan(plan: MergePlan, opts: PullOptions, localTree: FlatTree, contents: Map<string, Uint8Array>) {
  if (!opts.vet || !plan.writes.length) return [];
  const changes: IncomingChange[] = plan.writes.map((w) => ({
    path: w.path,
    content: w.entry ? contents.get(w.entry.oid)! : null,
  }));
  const refused = (await opts.vet(changes)).filter((r) => plan.writes.some((w) => w.path === r.path));
  const no = new Set(refused.map((r) => r.path));
  plan.writes = plan.writes.filter((w) => !no.has(w.path));
  for (const p of no) {
    const e = localTree.get(p);
    if (e) plan.merged.set(p, e);
    else plan.merged.delete(p);
  }
  return refused;
}

/** The author of a merge commit when the caller names none: whoever made the local branch's last commit. */
async function lastAuthor(l: Local, local: string | null): Promise<Author> {
  const info = local ? await readCommitInfo(l.paths.gitdir, local, l.limits) : null;
  return info?.author ?? { name: "sundeck", email: "sundeck@localhost" };
}
