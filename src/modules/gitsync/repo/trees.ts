/** Git trees as flat maps (`path -> {oid, mode}`), read from and written to the object store with isomorphic-git. */
import { gitFs as fs, loadGit, type RepoPaths } from "./igit";

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

/** The flattened tree of a commit (empty for null). */
export async function readFlat(paths: RepoPaths, commit: string | null): Promise<FlatTree> {
  const out: FlatTree = new Map();
  if (!commit) return out;
  const git = await loadGit();
  const { commit: c } = await git.readCommit({ fs, gitdir: paths.gitdir, oid: commit });
  const walk = async (treeOid: string, prefix: string) => {
    const { tree } = await git.readTree({ fs, gitdir: paths.gitdir, oid: treeOid });
    for (const e of tree) {
      const p = prefix ? `${prefix}/${e.path}` : e.path;
      if (e.type === "tree") await walk(e.oid, p);
      else out.set(p, { oid: e.oid, mode: e.mode });
    }
  };
  await walk(c.tree, "");
  return out;
}

/** The tree oid of a commit. */
export async function treeOf(paths: RepoPaths, commit: string): Promise<string> {
  const git = await loadGit();
  return (await git.readCommit({ fs, gitdir: paths.gitdir, oid: commit })).commit.tree;
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

/** Read a blob's bytes. */
export async function readBlob(paths: RepoPaths, oid: string): Promise<Uint8Array> {
  const git = await loadGit();
  return (await git.readBlob({ fs, gitdir: paths.gitdir, oid })).blob;
}
