/** A git sync status as GET /api/git/status sends it, for the unit tests of the CLI and the dashboard. */
import type { GitSyncStatus } from "../../src/shared/git-sync";

/** In sync at a known time and commit, with `over` applied. */
export const gitStatus = (over: Partial<GitSyncStatus> = {}): GitSyncStatus => ({
  enabled: true,
  state: "in_sync",
  behind_by: 0,
  last_sync_at: "2026-11-27T06:00:00Z",
  last_commit_sha: "0123456789abcdef0123456789abcdef01234567",
  last_error: null,
  ...over,
});
