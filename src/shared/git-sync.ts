/**
 * Wire shapes of the git sync routes as the CLI and the dashboard read them (CONTRACT "Git sync"; SPEC "Git sync
 * configuration"), and the words both use for them. Fields a server may add are optional here, so an older or newer
 * server still reads.
 */

export const GIT_SYNC_STATES = ["disabled", "in_sync", "behind", "conflict", "error"] as const;
export type GitSyncState = (typeof GIT_SYNC_STATES)[number];

/** What a response carries in `https_token` and `webhook_secret` when one is stored (both are write-only). */
export const GIT_SECRET_MASK = "********";

/** A conflict the last apply kept local state for (when the server lists them in the status). */
export interface GitSyncConflict {
  path?: string;
  paths?: string[];
  message?: string;
  detected_at?: string;
  commit_sha?: string | null;
}

/** GET /api/git/status */
export interface GitSyncStatus {
  enabled: boolean;
  state: GitSyncState;
  behind_by: number;
  last_sync_at: string | null;
  last_commit_sha: string | null;
  last_error: string | null;
  /**
   * When the last cycle ended, whatever its outcome (a failure leaves `last_sync_at` as it was); lets a client that
   * asked for a sync see it end even when it failed with the same error as before.
   */
  last_attempt_at?: string | null;
  /** A sync or apply running now, when the server says so. */
  running?: boolean;
  conflicts?: GitSyncConflict[];
  /**
   * What the last cycle did not take from the remote, and why: entries with unsafe names, files over the size limit,
   * objects over a limit, or a remote commit as a whole (a tree bomb); syncing went on without them.
   */
  skipped?: GitSyncSkipped[];
}

/** One thing the last cycle left out of what the remote sent. */
export interface GitSyncSkipped {
  path: string;
  reason: string;
}

/** GET /api/git/config, and the PUT body without `source` (secrets: the mask keeps, "" clears, a value sets). */
export interface GitSyncConfig {
  enabled: boolean;
  remote: string;
  branch: string;
  author_name: string;
  author_email: string;
  ssh_key_path: string;
  https_username: string;
  https_token: string;
  /** A duration such as "60s" or "5m". */
  poll_interval: string;
  webhook_secret: string;
  poll_enabled: boolean;
  auto_push_enabled: boolean;
  auto_apply_enabled: boolean;
  webhook_enabled: boolean;
  /** What a remote may cost (servers that have them; see docs/configuration.md). */
  max_pack_bytes?: number;
  max_objects?: number;
  max_file_bytes?: number;
  max_object_bytes?: number;
  max_tree_entries?: number;
  max_tree_depth?: number;
  max_paths?: number;
  cycle_timeout?: string;
}

/** The config response: where the values in force come from (stored at runtime, or the server's file). */
export type GitSyncConfigView = GitSyncConfig & { source: "db" | "yaml" };

/** The state in words, as the CLI prints it and the dashboard shows it. */
export function gitStateText(s: Pick<GitSyncStatus, "state" | "behind_by">): string {
  switch (s.state) {
    case "disabled":
      return "disabled";
    case "in_sync":
      return "in sync";
    case "behind":
      return `behind by ${s.behind_by} commit${s.behind_by === 1 ? "" : "s"}`;
    case "conflict":
      return "conflict (local state kept)";
    case "error":
      return "error";
    default:
      return String(s.state).replace(/_/g, " ");
  }
}

/** A commit sha cut to the length people read. */
export const shortSha = (sha: string | null | undefined): string | null => (sha ? sha.slice(0, 12) : null);

/** One line for a conflict: its path(s) and message, whatever of them the server gave, each path said once. */
export function conflictText(c: GitSyncConflict): string {
  const list = c.paths?.length ? c.paths : c.path ? [c.path] : [];
  // a message that names every path says it all
  if (c.message && list.every((p) => c.message!.includes(p))) return c.message;
  return [list.join(", "), c.message].filter(Boolean).join(": ") || "conflict";
}
