/**
 * Commits and trees read by our own bounded walk, never the library's parser (which throws on a name such as `..`
 * and has no limits). An entry with an unsafe or repeated name is skipped and reported; the rest of the tree is read.
 * A tree that breaks a structural limit (entries, depth, total paths), is missing or malformed cannot be judged
 * partly (a truncated tree would read as deletions): the walk then reports a `problem` and the caller keeps its own
 * side whole. Each tree object is parsed once, so a tree bomb costs its paths counted, not its objects re-read.
 */
import type { Deadline, GitLimits } from "./limits";
import { readBounded } from "./objects";
import { shownText } from "./pkt-line";
import type { Entry, FlatTree } from "./trees";

/** One entry left out, and why (shown on the Git Sync page and in the process log). */
export interface Refusal {
  path: string;
  reason: string;
}

/** A commit's tree, flattened, with what was left out; `problem` set when the tree as a whole could not be read. */
export interface Walk {
  tree: FlatTree;
  refusals: Refusal[];
  problem: string | null;
}

/** The parts of a commit the repository layer reads. */
export interface CommitInfo {
  tree: string;
  parents: string[];
  /** Committer time, unix seconds. */
  time: number;
  author: { name: string; email: string } | null;
}

const OID = /^[0-9a-f]{40}$/;
/** The longest name a file system takes (NAME_MAX): a longer one is skipped, and never held whole. */
const MAX_NAME_BYTES = 255;
/**
 * Characters of all the paths one walk may hold: 100,000 paths of 80. A name of 4 MB on a directory holding 10,000
 * entries made 10,000 paths of 4 MB each (40 GB) from a 20 KB pack; a chain of long names is the same at 4 KB a path.
 */
const MAX_PATH_CHARS = 8 * 1024 * 1024;
/** Trees read between two turns of the event loop. */
const YIELD_EVERY = 256;
/** Refusals listed one by one; the rest are counted (a tree of 10,000 `..` under 10,000 names is 10^8 of them). */
export const MAX_REFUSALS = 1000;

/** Read a commit object within the limits; null when it is missing, too big or malformed. */
export async function readCommitInfo(gitdir: string, oid: string, limits: GitLimits): Promise<CommitInfo | null> {
  const found = await readBounded(gitdir, oid, limits.maxObjectBytes);
  if (found.kind !== "ok" || found.type !== "commit") return null;
  const text = new TextDecoder().decode(found.content);
  const end = text.indexOf("\n\n");
  const head = (end < 0 ? text : text.slice(0, end)).split("\n");
  const tree = /^tree ([0-9a-f]{40})$/.exec(head[0] ?? "")?.[1];
  if (!tree) return null;
  const parents: string[] = [];
  let time = 0;
  let author: CommitInfo["author"] = null;
  for (const line of head.slice(1)) {
    if (line.startsWith("parent ")) {
      const p = line.slice(7);
      if (!OID.test(p)) return null;
      parents.push(p);
    } else if (line.startsWith("committer ")) {
      time = Number(/ (\d+) [+-]\d{4}$/.exec(line)?.[1] ?? 0);
    } else if (line.startsWith("author ")) {
      const m = /^author (.*) <([^>]*)> \d+ [+-]\d{4}$/.exec(line);
      if (m) author = { name: m[1]!, email: m[2]! };
    }
  }
  return { tree, parents, time, author };
}

/** A name shown in a report: control characters escaped, long names cut. */
export const shown = (path: string): string => shownText(path);

/** Why a tree entry's name cannot be a path component, or null when it can. */
function unsafeName(name: string): string | null {
  if (name === "" || name === "." || name === "..") return "an unsafe name";
  if (name.includes("/") || name.includes("\\")) return "a name with a slash";
  if (/[\u0000-\u001f\u007f]/.test(name)) return "a name with control characters";
  if (name.toLowerCase() === ".git") return "a .git entry";
  return null;
}

interface RawEntry {
  mode: string;
  /** At most MAX_NAME_BYTES of it, decoded. */
  name: string;
  oid: string;
  /** The name is longer than MAX_NAME_BYTES. */
  long?: true;
}

/** Parse a tree object's bytes: `<mode> <name>\0<20-byte id>` repeated; null when malformed. */
function parseTree(b: Uint8Array, maxEntries: number): RawEntry[] | "too_many" | null {
  const out: RawEntry[] = [];
  let i = 0;
  const dec = new TextDecoder("utf-8", { fatal: false });
  while (i < b.length) {
    if (out.length >= maxEntries) return "too_many";
    const sp = b.indexOf(0x20, i);
    if (sp < 0 || sp - i > 7) return null;
    const mode = dec.decode(b.subarray(i, sp));
    if (!/^[0-7]{5,6}$/.test(mode)) return null;
    const nul = b.indexOf(0, sp + 1);
    if (nul < 0 || nul + 21 > b.length) return null;
    const long = nul - sp - 1 > MAX_NAME_BYTES;
    out.push({
      mode,
      name: dec.decode(b.subarray(sp + 1, Math.min(nul, sp + 1 + MAX_NAME_BYTES))),
      oid: Buffer.from(b.subarray(nul + 1, nul + 21)).toString("hex"),
      ...(long ? { long } : {}),
    });
    i = nul + 21;
  }
  return out;
}

/** Walk a commit's tree (empty for null) within the limits. */
export async function walkCommit(gitdir: string, commit: string | null, limits: GitLimits, deadline: Deadline): Promise<Walk> {
  const tree: FlatTree = new Map();
  const refusals: Refusal[] = [];
  if (!commit) return { tree, refusals, problem: null };
  const info = await readCommitInfo(gitdir, commit, limits);
  if (!info) return { tree, refusals, problem: `commit ${commit.slice(0, 12)} is missing, too big or malformed` };
  const parsed = new Map<string, RawEntry[]>();
  let paths = 0;
  let chars = 0;
  let unlisted = 0;
  const refuse = (path: string, reason: string) => {
    if (refusals.length < MAX_REFUSALS) refusals.push({ path: shown(path), reason });
    else unlisted++;
  };
  const listed = () => {
    if (unlisted) refusals.push({ path: "…", reason: `skipped: ${unlisted} more entries with unsafe or repeated names` });
    return refusals;
  };
  const fail = (problem: string): Walk => ({ tree: new Map(), refusals: listed(), problem });

  const stack: Array<{ oid: string; prefix: string; depth: number }> = [{ oid: info.tree, prefix: "", depth: 0 }];
  while (stack.length) {
    deadline.check("reading a tree");
    const { oid, prefix, depth } = stack.pop()!;
    let entries = parsed.get(oid);
    if (!entries) {
      // a read does not yield: the reverse proxy shares the event loop
      if (parsed.size % YIELD_EVERY === YIELD_EVERY - 1) await new Promise<void>((r) => setImmediate(r));
      const found = await readBounded(gitdir, oid, limits.maxObjectBytes);
      const where = prefix || "the root";
      if (found.kind === "too_big") return fail(`the tree at ${shown(where)} is over the ${limits.maxObjectBytes} byte limit`);
      if (found.kind !== "ok" || found.type !== "tree") return fail(`the tree at ${shown(where)} is missing`);
      const p = parseTree(found.content, limits.maxTreeEntries);
      if (p === "too_many")
        return fail(`the tree at ${shown(where)} has more than ${limits.maxTreeEntries} entries (git_sync.max_tree_entries)`);
      if (!p) return fail(`the tree at ${shown(where)} is malformed`);
      entries = p;
      parsed.set(oid, entries);
    }
    const seen = new Set<string>();
    for (const e of entries) {
      // every entry named counts, skipped or not: a walk's cost is what it looks at
      if (++paths > limits.maxPaths)
        return fail(`the commit names more than ${limits.maxPaths} paths (git_sync.max_paths): a tree bomb, or far too big`);
      const path = prefix ? `${prefix}/${e.name}` : e.name;
      const bad =
        (e.long ? `a name longer than ${MAX_NAME_BYTES} bytes` : null) ??
        unsafeName(e.name) ??
        (seen.has(e.name) ? "a name given twice in one tree" : null);
      if (bad) {
        refuse(path, `skipped: ${bad}`);
        continue;
      }
      seen.add(e.name);
      chars += path.length;
      if (chars > MAX_PATH_CHARS)
        return fail(`the commit's paths are longer than ${MAX_PATH_CHARS} characters in all: a tree bomb, or far too big`);
      if (e.mode === "40000" || e.mode === "040000") {
        if (depth + 1 > limits.maxTreeDepth)
          return fail(`${shown(path)} is more than ${limits.maxTreeDepth} directories deep (git_sync.max_tree_depth)`);
        stack.push({ oid: e.oid, prefix: path, depth: depth + 1 });
      } else tree.set(path, { oid: e.oid, mode: e.mode } satisfies Entry);
    }
  }
  return { tree, refusals: listed(), problem: null };
}
