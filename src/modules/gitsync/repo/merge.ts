/**
 * Local-wins three-way merge, planned without touching anything: from the merge base, the local commit, the remote
 * commit and the work tree, the tree of the merge commit and the files to write. A file changed on both sides keeps
 * its local content (committed or not); a remote change to a file nobody touched locally is applied. Paths the policy
 * does not admit, unsafe names and non-files are never written to the work tree, and paths outside the policy are
 * left out of the merge tree (the remote ends up holding only allowed files once the merge is pushed).
 */
import { isSafePath } from "./paths";
import { type Entry, type FlatTree, isRegular, sameEntry } from "./trees";

/** What to do to the work tree for one path: write this entry (from the remote) or delete the file (null). */
export interface Write {
  path: string;
  entry: Entry | null;
}

/** The outcome of planning: the merge tree and the work-tree writes, with the paths to report. */
export interface MergePlan {
  merged: FlatTree;
  writes: Write[];
  /** Both sides changed the path differently: local content kept. */
  conflicts: string[];
  /** The remote added or changed a path that is not admitted, unsafe, or not a regular file: not written. */
  ignored: string[];
}

/**
 * Plan the local-wins merge. `work` holds the work tree's allowed files (what "local" really is: uncommitted edits
 * count as local changes).
 */
export function planLocalWins(o: {
  base: FlatTree;
  local: FlatTree;
  remote: FlatTree;
  work: FlatTree;
  allowed: (path: string) => boolean;
}): MergePlan {
  const merged: FlatTree = new Map();
  const writes: Write[] = [];
  const conflicts: string[] = [];
  const ignored: string[] = [];
  const all = new Set([...o.base.keys(), ...o.local.keys(), ...o.remote.keys(), ...o.work.keys()]);
  for (const path of [...all].sort()) {
    const b = o.base.get(path);
    const l = o.local.get(path);
    const r = o.remote.get(path);
    const remoteChanged = !sameEntry(r, b);
    const localChanged = !sameEntry(l, b);
    // the tree: the side that changed wins; when both did, local does
    const takeRemote = remoteChanged && !localChanged;
    const m = takeRemote ? r : l;
    const treeConflict = remoteChanged && localChanged && !sameEntry(l, r);
    const managed = isSafePath(path) && o.allowed(path);
    if (!managed) {
      // outside the policy: never written here, and left out of the merge, so our next push removes it
      if (r && remoteChanged) ignored.push(path);
      continue;
    }
    if (takeRemote && r && !isRegular(r)) {
      // a symlink or submodule where a plain file belongs: not written, the local entry stays
      ignored.push(path);
      if (l) merged.set(path, l);
      continue;
    }
    const w = o.work.get(path);
    if (sameEntry(w, l)) {
      // clean in the work tree: it follows the merge tree
      if (!sameEntry(m, w)) writes.push({ path, entry: m ?? null });
      if (treeConflict) conflicts.push(path);
    } else if (remoteChanged && !sameEntry(w, r) && (treeConflict || takeRemote)) {
      // an uncommitted local edit meets a remote change: the edit stays, the file is not written
      conflicts.push(path);
    }
    if (m) merged.set(path, m);
  }
  return { merged, writes, conflicts, ignored };
}
