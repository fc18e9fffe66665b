/** The shapes of the repository layer's API (see README.md). */
import type { GitSyncError } from "./errors";
import type { Deadline, GitLimits } from "./limits";
import type { SkippedObject } from "./pack-ingest";
import type { RemoteSpec } from "./remote";
import type { RemoteAuth } from "./transport";
import type { Refusal } from "./tree-walk";

/** Commit author (and committer). */
export interface Author {
  name: string;
  email: string;
}

/** How to open a repository. */
export interface OpenOptions {
  /** The work tree: apps_dir. */
  workTree: string;
  /** The git directory; `<data_dir>/git/repo` keeps it out of apps_dir (see README). */
  gitDir: string;
  /** SSH or HTTP(S) URL; credentials in an HTTP(S) URL are lifted out and never stored. */
  remote: string;
  auth: RemoteAuth;
  branch?: string;
  /** The policy of what may be committed (the files layer provides it); asked with `/`-separated relative paths. */
  allowed: (path: string) => boolean;
  /** How deep `commit("all")` looks for files (default 2: `<slug>/<file>`). */
  maxDepth?: number;
  /** Deadline of one network operation (default 120 s). */
  timeoutMs?: number;
  /** What a remote may cost (limits.ts; the defaults without). */
  limits?: GitLimits;
}

/** The remote as seen by `remoteState()`. */
export type RemoteState =
  | { reachable: true; empty: boolean; branchSha: string | null }
  | { reachable: false; error: GitSyncError };

/** Where the local branch stands against the remote after a fetch. */
export interface FetchResult {
  behindBy: number;
  aheadBy: number;
  /** The remote branch's sha, or null when the remote has no such branch. */
  remoteSha: string | null;
  /** Objects the fetch did not store (over a limit), by id. */
  skipped: SkippedObject[];
}

/** A remote file change offered to `vet` before it is written to the work tree (`content` null: deleted). */
export interface IncomingChange {
  path: string;
  content: Uint8Array | null;
}

/** What a local-wins pull did. */
export interface PullResult {
  /** Paths whose remote content (or deletion) is now in the work tree. */
  applied: string[];
  /** Paths both sides changed: the local content was kept. */
  conflicts: string[];
  /** Remote changes `vet` refused: local content kept, nothing written. */
  refused: { path: string; reason: string }[];
  /** Remote changes to paths outside the policy, unsafe names or non-files: never written. */
  ignored: string[];
  /**
   * What the remote sent that could not be judged: entries skipped by the tree walk (unsafe or repeated names), files
   * over the size limit or missing (local content kept), or the remote commit as a whole (a tree over a limit, a
   * history that cannot be read; then none of its changes is applied and the merge keeps the local tree).
   */
  skipped: Refusal[];
  /** The local branch after the pull (null while it has no commits). */
  head: string | null;
  /** A merge commit was made: local has commits the caller should push. */
  merged: boolean;
}

/** Options of a pull. */
export interface PullOptions {
  /** Author of a merge commit (default: the author of the local branch's last commit). */
  author?: Author;
  /**
   * Checks the incoming changes before any is written (the compose safety checks run here); returns the refused
   * paths with a reason. Refused changes are treated as conflicts the local side wins.
   */
  vet?: (changes: IncomingChange[]) => Promise<{ path: string; reason: string }[]> | { path: string; reason: string }[];
}

/** An open repository; create with `openRepo`. */
export interface GitRepo {
  readonly transport: RemoteSpec["transport"];
  /** The remote URL without credentials. */
  readonly remoteUrl: string;
  readonly branch: string;
  /** Reachable? Empty (no refs at all)? Errors worded for a user. */
  remoteState(): Promise<RemoteState>;
  /** Initial commit of every allowed file, pushed to an empty remote; refused (nothing pushed) when it has refs. */
  firstPush(message: string, author: Author): Promise<{ sha: string }>;
  /** Commit the given paths (or every allowed file); null when nothing changed. Throws not_allowed for other paths. */
  commit(paths: string[] | "all", message: string, author: Author): Promise<string | null>;
  /** Push the local branch (never forced); non_fast_forward when the remote moved on. */
  push(deadline?: Deadline): Promise<{ sha: string | null }>;
  /** Fetch the remote branch (within `deadline`, default the cycle limit) and count commits on each side. */
  fetch(deadline?: Deadline): Promise<FetchResult>;
  /** Bring the fetched remote commits into the branch and work tree, local side winning conflicts. */
  pullLocalWins(opts?: PullOptions & { deadline?: Deadline }): Promise<PullResult>;
  /** The local branch's sha (null before the first commit). */
  head(): Promise<string | null>;
  /** Resolves once every operation queued so far has finished (before opening the same git directory anew). */
  idle(): Promise<void>;
}
