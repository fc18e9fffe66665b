/**
 * What a remote may cost the server. Git sync shares its process with the reverse proxy, so everything a remote sends
 * is bounded before it is read: the pack on the wire, the objects in it, each object's size by its header (an
 * oversized blob is never inflated into memory), and the trees walked (depth, entries, paths), all within one cycle's
 * time. The defaults hold on a 1 GB VPS (memory per object is at most `maxObjectBytes`; the pack goes to disk).
 */

/** The bounds of one fetch and of every tree walk. */
export interface GitLimits {
  /** Bytes of pack data one fetch may receive (it is written to disk as it arrives, never held in memory). */
  maxPackBytes: number;
  /** Objects in one pack. */
  maxObjects: number;
  /** A file (blob) larger than this is skipped by its header size and never inflated: the compose limit. */
  maxBlobBytes: number;
  /** A tree, commit or tag larger than this is skipped. */
  maxObjectBytes: number;
  /** Entries in one tree. */
  maxTreeEntries: number;
  /** Directories below the root. */
  maxTreeDepth: number;
  /** Paths one commit's tree may hold in all (a tree bomb names billions with a dozen objects). */
  maxPaths: number;
  /** How long one sync cycle may take, network included. */
  cycleTimeoutMs: number;
}

/** The defaults (the server config's `git_sync.max_*` and `cycle_timeout` keys; a unit test holds them equal). */
export const DEFAULT_LIMITS: GitLimits = Object.freeze({
  maxPackBytes: 64 * 1024 * 1024,
  maxObjects: 100_000,
  maxBlobBytes: 1024 * 1024,
  maxObjectBytes: 4 * 1024 * 1024,
  maxTreeEntries: 10_000,
  maxTreeDepth: 16,
  maxPaths: 100_000,
  cycleTimeoutMs: 120_000,
});

/** A deadline shared by the steps of one cycle: `left()` ms remain; `check()` throws once it passed. */
export interface Deadline {
  readonly at: number;
  /** Its length, ms (for messages). */
  readonly ms: number;
  left(): number;
  check(what: string): void;
}

/** A deadline `ms` from now; the error names `where`. */
export function deadline(ms: number, onExpired: (what: string) => Error): Deadline {
  const at = Date.now() + ms;
  return {
    at,
    ms,
    left: () => Math.max(0, at - Date.now()),
    check(what: string) {
      if (Date.now() > at) throw onExpired(what);
    },
  };
}
