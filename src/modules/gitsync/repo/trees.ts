/** Git trees as flat maps (`path -> {oid, mode}`): read by the bounded walk, written with isomorphic-git. */
import { gitFs as fs, loadGit, type RepoPaths } from "./igit";
import { deadline, type GitLimits } from "./limits";
import { readBounded } from "./objects";
import { walkCommit } from "./tree-walk";

/** One tree entry below the root: a blob (`100644`, `100755`), a symlink (`120000`) or a submodule (`160000`). */
export interface Entry {
  oid: string;
  mode: string;
}

/** A whole tree, flattened: every non-tree entry by its full path. */
export type FlatTree = Map<string, Entry>;

/** Whether two entries (or absences) are the same content and mode. */
export function sameEntry(a: Entry | undefined, b: Entry | undefined): boolean {
  if (!a || !b) return a === b;
  return a.oid === b.oid && a.mode === b.mode;
}

/** Whether an entry is a plain file that may be written to the work tree. */
export function isRegular(e: Entry): boolean {
  return e.mode === "100644" || e.mode === "100755";
}

/**
 * The flattened tree of a commit (empty for null), read by the bounded walk. A tree that cannot be read whole (it
 * breaks a limit: only a remote's could) reads as empty, so the next commit is built from the work tree alone.
 */
export async function readFlat(paths: RepoPaths, commit: string | null, limits: GitLimits): Promise<FlatTree> {
  const w = await walkCommit(
    paths.gitdir,
    commit,
    limits,
    deadline(limits.cycleTimeoutMs, (what) => new Error(`timed out ${what}`)),
  );
  return w.problem ? new Map() : w.tree;
}

/** Write a flattened tree (and its subtrees) to the object store; returns the root tree oid. */
export async function writeFlat(paths: RepoPaths, flat: FlatTree): Promise<string> {
  const git = await loadGit();
  type Node = { files: Map<string, Entry>; dirs: Map<string, Node> };
  const root: Node = { files: new Map(), dirs: new Map() };
  for (const [path, entry] of flat) {
    const parts = path.split("/");
    let node = root;
    for (const part of parts.slice(0, -1)) {
      let next = node.dirs.get(part);
      if (!next) {
        next = { files: new Map(), dirs: new Map() };
        node.dirs.set(part, next);
      }
      node = next;
    }
    node.files.set(parts[parts.length - 1]!, entry);
  }
  const write = async (node: Node): Promise<string> => {
    const tree: { mode: string; path: string; oid: string; type: "blob" | "tree" | "commit" }[] = [];
    for (const [name, e] of node.files)
      tree.push({ mode: e.mode, path: name, oid: e.oid, type: e.mode === "160000" ? "commit" : "blob" });
    for (const [name, child] of node.dirs) tree.push({ mode: "040000", path: name, oid: await write(child), type: "tree" });
    return git.writeTree({ fs, gitdir: paths.gitdir, tree });
  };
  return write(root);
}

/** Read a blob's bytes (within the limits: a file over them is an error here, the pull keeps it out before). */
export async function readBlob(paths: RepoPaths, oid: string, limits: GitLimits): Promise<Uint8Array> {
  const found = await readBounded(paths.gitdir, oid, Math.max(limits.maxBlobBytes, limits.maxObjectBytes));
  if (found.kind !== "ok" || found.type !== "blob") throw new Error(`blob ${oid.slice(0, 12)} cannot be read (${found.kind})`);
  return found.content;
}
