/**
 * The git sync remote forms (CONTRACT: SSH, HTTPS, or plain http:// for a LAN), classified without a transport: the
 * config check refuses the rest (local paths, file://, ext::, git://) up front, the repository layer picks its
 * transport from the same reading.
 */

/** A remote, classified. `url` never holds credentials. */
export interface RemoteSpec {
  transport: "http" | "https" | "ssh";
  url: string;
  /** `host` or `host:port`: what error messages name. */
  where: string;
  /** Credentials found in the URL's user part (HTTP(S) only), removed from `url`. */
  userinfo?: { username: string; password: string };
}

/** The forms accepted, for messages. */
export const REMOTE_FORMS = "an SSH (git@host:path or ssh://host/path), https:// or http:// URL";

// scp-like syntax: [user@]host:path, where host has no slash and the path does not start with a slash pair
const SCP_LIKE = /^(?:([^@/:\s]+)@)?(\[[0-9a-fA-F:.]+\]|[^@/:\s]+):(?!\/\/)(.+)$/;
const SAFE_HOST = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_][A-Za-z0-9._-]*)$/;

const problem = (why: string) => ({ problem: `must be ${REMOTE_FORMS}: ${why}` });

/** Classify `remote`, or say what is wrong with it (a line starting "must be", never echoing the URL). */
export function classifyRemote(remote: string): RemoteSpec | { problem: string } {
  const raw = remote.trim();
  if (!raw || /[\s\0]/.test(raw)) return problem("it is empty or holds spaces");
  if (/^https?:\/\//i.test(raw)) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      return problem("it is not a valid URL");
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
      return problem("it is not a valid URL");
    }
    if (u.password) return problem("an SSH URL cannot hold a password (use ssh_key_path)");
    if (!SAFE_HOST.test(u.hostname)) return problem("the SSH host name is not valid");
    if (!u.pathname || u.pathname === "/") return problem("the SSH URL has no repository path");
    return { transport: "ssh", url: raw, where: u.host };
  }
  const m = raw.includes("://") || raw.startsWith("-") ? null : SCP_LIKE.exec(raw);
  if (m && SAFE_HOST.test(m[2]!) && !m[3]!.startsWith("-")) return { transport: "ssh", url: raw, where: m[2]! };
  return problem("local paths, file:// and other transports are not supported");
}
