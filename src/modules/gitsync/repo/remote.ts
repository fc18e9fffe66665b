/**
 * Remote URLs: which transport a remote needs (HTTP(S) through isomorphic-git, SSH through the system git), a form
 * without credentials to store in .git/config and to show, and credentials lifted out of an `https://user:token@` URL.
 */
import { GitSyncError } from "./errors";

/** A remote, classified. `url` never holds credentials. */
export interface RemoteSpec {
  transport: "http" | "https" | "ssh";
  url: string;
  /** `host` or `host:port`: what error messages name. */
  where: string;
  /** Credentials found in the URL's user part (HTTP(S) only), removed from `url`. */
  userinfo?: { username: string; password: string };
}

// scp-like syntax: [user@]host:path, where host has no slash and the path does not start with a slash pair
const SCP_LIKE = /^(?:([^@/:\s]+)@)?(\[[0-9a-fA-F:.]+\]|[^@/:\s]+):(?!\/\/)(.+)$/;
const SAFE_HOST = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_][A-Za-z0-9._-]*)$/;

/** Classify `remote`; throws GitSyncError("unsupported_remote") for anything else (file paths, `ext::`, `git://`). */
export function parseRemote(remote: string): RemoteSpec {
  const raw = remote.trim();
  if (!raw || /[\s\0]/.test(raw)) throw unsupported("the remote URL is empty or holds spaces");
  if (/^https?:\/\//i.test(raw)) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw unsupported("the remote URL is not a valid URL");
    }
    const userinfo =
      u.username || u.password
        ? { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) }
        : undefined;
    u.username = "";
    u.password = "";
    const transport = u.protocol === "https:" ? "https" : "http";
    return { transport, url: u.toString(), where: u.host, userinfo };
  }
  if (/^ssh:\/\//i.test(raw)) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw unsupported("the remote URL is not a valid URL");
    }
    if (u.password) throw unsupported("an SSH remote URL cannot hold a password: use ssh_key_path");
    if (!SAFE_HOST.test(u.hostname)) throw unsupported("the SSH host name is not valid");
    if (!u.pathname || u.pathname === "/") throw unsupported("the SSH remote URL has no repository path");
    return { transport: "ssh", url: raw, where: u.host };
  }
  if (raw.includes("://") || raw.startsWith("-")) throw unsupported("only https://, http:// and SSH remotes are supported");
  const m = SCP_LIKE.exec(raw);
  if (m && SAFE_HOST.test(m[2]!) && !m[3]!.startsWith("-")) return { transport: "ssh", url: raw, where: m[2]! };
  throw unsupported("only https://, http:// and SSH remotes are supported");
}

function unsupported(why: string): GitSyncError {
  return new GitSyncError("unsupported_remote", why);
}
