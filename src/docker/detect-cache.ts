/**
 * What compose detection found, kept in the data dir keyed by the identity of the files it ran (path, size, mtime and
 * inode of `docker`, of the compose plugin in each CLI plugin directory, and of `docker-compose`). A start whose
 * files are unchanged reads the answer with a few stats instead of spawning compose (the Python `docker-compose
 * version` alone takes ~600 ms); any changed, added or removed file means detecting again before the server is ready.
 */
import { readFileSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { writeFileAtomic } from "../lib/fs";

/** Where the answer is kept, inside the data dir. */
export const DETECT_CACHE_FILE = "compose-detected.json";

/** What detection found: a flavor and version, or nothing (neither compose runs). */
export type Detected = { flavor: "v2" | "v1"; version: string } | null;

/** Bumped when the key's recipe changes, so an older file never matches. */
const FORMAT = 1;

/** Where the docker CLI looks for plugins besides its config dir (docker/cli, cli-plugins/manager, unix). */
const SYSTEM_PLUGIN_DIRS = [
  "/usr/local/lib/docker/cli-plugins",
  "/usr/local/libexec/docker/cli-plugins",
  "/usr/lib/docker/cli-plugins",
  "/usr/libexec/docker/cli-plugins",
];

/**
 * The identity of every file that decides what `docker compose version` and `docker-compose version` answer, as one
 * string. The CLI's config.json is included: it can name extra plugin directories.
 */
export function binaryIdentity(env: Record<string, string | undefined>): string {
  const configDir = env.DOCKER_CONFIG || join(env.HOME || "/root", ".docker");
  const files = [
    `docker=${identity(which("docker", env.PATH))}`,
    `docker-compose=${identity(which("docker-compose", env.PATH))}`,
    `config=${identity(join(configDir, "config.json"))}`,
    ...[join(configDir, "cli-plugins"), ...SYSTEM_PLUGIN_DIRS].map((d) => `${d}=${identity(join(d, "docker-compose"))}`),
  ];
  return JSON.stringify({ format: FORMAT, path: env.PATH ?? "", home: env.HOME ?? "", files });
}

/** The kept answer when it was found with these very files, else undefined (detect again). */
export function readDetected(dataDir: string, key: string): Detected | undefined {
  try {
    const kept = JSON.parse(readFileSync(join(dataDir, DETECT_CACHE_FILE), "utf8"));
    if (kept?.key !== key) return undefined;
    const d = kept.detected;
    if (d === null) return null;
    if ((d?.flavor === "v2" || d?.flavor === "v1") && typeof d.version === "string")
      return { flavor: d.flavor, version: d.version };
  } catch {
    // missing or unreadable: detect again
  }
  return undefined;
}

/** Keep what detection found with the files of `key`. */
export function writeDetected(dataDir: string, key: string, detected: Detected): void {
  writeFileAtomic(join(dataDir, DETECT_CACHE_FILE), `${JSON.stringify({ key, detected })}\n`);
}

/** The first executable file named `name` on PATH, as execvp finds it; null when there is none. */
function which(name: string, path: string | undefined): string | null {
  for (const dir of (path || "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const file = join(dir, name);
    try {
      const s = statSync(file);
      if (s.isFile() && s.mode & 0o111) return file;
    } catch {
      // not in this directory
    }
  }
  return null;
}

/** Path, size, mtime, ctime and inode of the file (symlinks followed), or "missing". */
function identity(file: string | null): string {
  if (file === null) return "missing";
  try {
    const s = statSync(file);
    // ctime too: package managers keep a file's mtime from the archive, but cannot set its ctime
    return `${file}:${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.ino}:${s.dev}`;
  } catch {
    return `${file}:missing`;
  }
}
