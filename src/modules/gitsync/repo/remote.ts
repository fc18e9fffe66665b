/**
 * Remote URLs: which transport a remote needs (HTTP(S) through isomorphic-git, SSH through the system git), a form
 * without credentials to store in .git/config and to show, and credentials lifted out of an `https://user:token@` URL.
 * The reading itself is shared with the config check (src/shared/git-remote.ts).
 */
import { classifyRemote, type RemoteSpec } from "../../../shared/git-remote";
import { GitSyncError } from "./errors";

export type { RemoteSpec };

/** Classify `remote`; throws GitSyncError("unsupported_remote") for anything else (file paths, `ext::`, `git://`). */
export function parseRemote(remote: string): RemoteSpec {
  const r = classifyRemote(remote);
  if ("problem" in r) throw new GitSyncError("unsupported_remote", `the remote ${r.problem}`);
  return r;
}
