/**
 * The local-wins pull: plan the merge of the fetched remote branch (merge.ts), let `vet` refuse incoming files, write
 * the accepted ones to the work tree, then fast-forward or make a merge commit (parents: local, remote) so the next
 * push is a fast-forward. Works on what the last fetch brought.
 */
import { gitFs as fs } from "./igit";
import { type Local, readWork, resolveRef, syncIndex, workFiles } from "./local";
import { type MergePlan, planLocalWins } from "./merge";
import { removeRel, writeRel } from "./paths";
import { type FlatTree, readBlob, readFlat, sameEntry, treeOf, writeFlat } from "./trees";
import type { Author, IncomingChange, PullOptions, PullResult } from "./types";

/** Bring `refs/remotes/origin/<branch>` into the branch and the work tree, the local side winning conflicts. */
export async function pullLocalWins(l: Local, opts: PullOptions = {}): Promise<PullResult> {
  const { git, paths } = l;
  const local = await resolveRef(l, l.ref);
  const remote = await resolveRef(l, l.tracking);
  const none: PullResult = { applied: [], conflicts: [], refused: [], ignored: [], head: local, merged: false };
  if (!remote || remote === local) return none;
  const bases = local ? await git.findMergeBase({ fs, gitdir: paths.gitdir, oids: [local, remote] }) : [];
  const base: string | null = bases[0] ?? null;
  if (base === remote) return none;

  const [baseTree, localTree, remoteTree] = await Promise.all([
    readFlat(paths, base),
    readFlat(paths, local),
    readFlat(paths, remote),
  ]);
  const work = await readWork(l, new Set([...workFiles(l), ...baseTree.keys(), ...localTree.keys(), ...remoteTree.keys()]));
  const plan = planLocalWins({ base: baseTree, local: localTree, remote: remoteTree, work, allowed: l.allowed });
  const refused = await vetPlan(l, plan, opts, localTree);

  for (const w of plan.writes) {
    if (w.entry) writeRel(paths.dir, w.path, await readBlob(paths, w.entry.oid), w.entry.mode === "100755");
    else removeRel(paths.dir, w.path);
  }

  const mergedTree = await writeFlat(paths, plan.merged);
  let head: string;
  let merged = false;
  if ((base === local || !local) && mergedTree === (await treeOf(paths, remote))) {
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
  return { applied: plan.writes.map((w) => w.path), conflicts: plan.conflicts, refused, ignored: plan.ignored, head, merged };
}

/** Ask `vet` about the writes; refused ones leave the plan (the local entry goes back into the merge tree). */
async function vetPlan(l: Local, plan: MergePlan, opts: PullOptions, localTree: FlatTree) {
  if (!opts.vet || !plan.writes.length) return [];
  const changes: IncomingChange[] = [];
  for (const w of plan.writes) changes.push({ path: w.path, content: w.entry ? await readBlob(l.paths, w.entry.oid) : null });
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
  if (!local) return { name: "sundeck", email: "sundeck@localhost" };
  const { commit } = await l.git.readCommit({ fs, gitdir: l.paths.gitdir, oid: local });
  return { name: commit.author.name, email: commit.author.email };
}
