/** The RemoteAuth a `git_sync` configuration means: SSH remotes use the key, HTTP(S) remotes the token. */
import { join } from "node:path";
import { parseRemote } from "./remote";
import type { RemoteAuth } from "./transport";

/** Where SSH host keys are pinned at first contact. */
export function knownHostsPath(dataDir: string): string {
  return join(dataDir, "git", "known_hosts");
}

/** Credentials for `cfg.remote` from the configuration (throws GitSyncError for a remote we cannot talk to). */
export function authFor(
  cfg: { remote: string; ssh_key_path: string; https_username: string; https_token: string },
  dataDir: string,
): RemoteAuth {
  if (parseRemote(cfg.remote).transport === "ssh")
    return { kind: "ssh", keyPath: cfg.ssh_key_path || undefined, knownHostsPath: knownHostsPath(dataDir) };
  if (cfg.https_token) return { kind: "token", username: cfg.https_username || undefined, token: cfg.https_token };
  return { kind: "none" };
}
