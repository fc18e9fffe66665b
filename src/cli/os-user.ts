/**
 * The operating-system user running a server-side command, named in the activity it writes (actor source `cli`).
 * Bun's os.userInfo() answers "unknown" where it cannot resolve the uid (seen for root in containers), so the uid is
 * looked up in /etc/passwd too before trusting $USER or $LOGNAME; the last resort is the bare uid.
 */
import { readFileSync } from "node:fs";
import { userInfo } from "node:os";

/** Where the name may come from; tests replace them. */
export interface OsUserSources {
  /** os.userInfo(); may throw when the uid has no passwd entry. */
  userInfo: () => { username: string; uid: number };
  /** The text of /etc/passwd, or "" when it cannot be read. */
  passwd: () => string;
  env: Record<string, string | undefined>;
  uid: () => number;
}

const SYSTEM: OsUserSources = {
  userInfo: () => userInfo(),
  passwd: () => {
    try {
      return readFileSync("/etc/passwd", "utf8");
    } catch {
      return "";
    }
  },
  env: process.env,
  uid: () => process.getuid?.() ?? -1,
};

/** The name of `uid` in passwd text (`name:x:uid:...` lines), or null. */
export function passwdName(passwd: string, uid: number): string | null {
  for (const line of passwd.split("\n")) {
    const [name, , id] = line.split(":");
    if (name && id !== undefined && Number(id) === uid && /^\d+$/.test(id)) return name;
  }
  return null;
}

/** The login name of the user running this process. */
export function osUserName(src: OsUserSources = SYSTEM): string {
  let uid = src.uid();
  try {
    const info = src.userInfo();
    uid = info.uid;
    if (info.username && info.username !== "unknown") return info.username;
  } catch {
    // no passwd entry for this uid
  }
  return passwdName(src.passwd(), uid) || src.env.USER || src.env.LOGNAME || `uid ${uid}`;
}
