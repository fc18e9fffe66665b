/** The repository layer of git sync: open a repository over apps_dir and talk to its remote. See README.md. */
export { GitSyncError, type GitSyncErrorCode } from "./errors";
export { DEFAULT_LIMITS, type Deadline, deadline, type GitLimits } from "./limits";
export { parseRemote, type RemoteSpec } from "./remote";
export { openRepo } from "./repo";
export { DEFAULT_TIMEOUT_MS, type RemoteAuth } from "./transport";
export type { Refusal } from "./tree-walk";
export type {
  Author,
  FetchResult,
  GitRepo,
  IncomingChange,
  OpenOptions,
  PullOptions,
  PullResult,
  RemoteState,
} from "./types";
