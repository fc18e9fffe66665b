/**
 * SSH remotes (isomorphic-git has no SSH transport): refs and fetches by our own bounded upload-pack client over
 * `ssh <host> git-upload-pack '<path>'` (fetch-pack.ts: the remote's objects never reach the system git unbounded),
 * pushes through the system `git`. Both get a minimal environment (no inherited GIT_* variables, no user or system
 * git config, no prompts, hooks off, only the ssh protocol allowed) and an ssh command that uses ssh_key_path alone
 * and pins the host key at first contact (accept-new) in a known_hosts file of ours, so a later change of host key
 * is refused rather than trusted.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { GitSyncError, sshError } from "./errors";
import { type Fetched, fetchBranch, listed, type UploadPackConnection } from "./fetch-pack";
import type { RepoPaths } from "./igit";
import { DEFAULT_LIMITS, type Deadline, deadline as deadlineOf, type GitLimits } from "./limits";
import { FLUSH, PktReader, shownText } from "./pkt-line";
import type { RemoteSpec } from "./remote";
import type { RemoteAuth, RemoteRef, Transport } from "./transport";
import { readAdvertisement } from "./upload-pack";

const SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Quote one word for the shell git runs GIT_SSH_COMMAND with. */
function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The ssh command line for GIT_SSH_COMMAND. */
export function sshCommand(auth: Extract<RemoteAuth, { kind: "ssh" }>, timeoutMs: number): string {
  const connect = Math.max(5, Math.min(30, Math.round(timeoutMs / 4000)));
  const opts = [
    "ssh",
    "-o BatchMode=yes",
    "-o StrictHostKeyChecking=accept-new",
    `-o UserKnownHostsFile=${shq(auth.knownHostsPath)}`,
    "-o LogLevel=ERROR",
    `-o ConnectTimeout=${connect}`,
    "-o ServerAliveInterval=15",
    "-o ServerAliveCountMax=4",
    "-o ForwardAgent=no",
    "-o ClearAllForwardings=yes",
  ];
  // with a key of our own, ignore the user's ssh config and agent so the key used is exactly this one
  if (auth.keyPath)
    opts.splice(1, 0, "-F /dev/null", `-i ${shq(auth.keyPath)}`, "-o IdentitiesOnly=yes", "-o IdentityAgent=none");
  return opts.join(" ");
}

/** Where an SSH remote points: what ssh connects to, and the repository path git-upload-pack is given. */
export function sshTarget(url: string): { host: string; port: string | null; user: string | null; path: string } {
  if (/^ssh:\/\//i.test(url)) {
    const u = new URL(url);
    const path = decodeURIComponent(u.pathname);
    // ssh://host/~user/repo names a home directory, as git reads it
    return {
      host: u.hostname.replace(/^\[|\]$/g, ""),
      port: u.port || null,
      user: u.username ? decodeURIComponent(u.username) : null,
      path: path.startsWith("/~") ? path.slice(1) : path,
    };
  }
  const m = /^(?:([^@/:\s]+)@)?(\[[0-9a-fA-F:.]+\]|[^@/:\s]+):(.+)$/.exec(url)!;
  return { host: m[2]!.replace(/^\[|\]$/g, ""), port: null, user: m[1] ?? null, path: m[3]! };
}

/** Stderr kept from ssh for the error message. */
const MAX_STDERR = 8192;

/** One upload-pack exchange over ssh: one process, the advertisement, then one request on its stdin. */
function sshConnection(
  remote: RemoteSpec,
  auth: Extract<RemoteAuth, { kind: "ssh" }>,
  env: Record<string, string>,
  deadline: Deadline,
): UploadPackConnection {
  const where = remote.where;
  const t = sshTarget(remote.url);
  const args = [...(t.port ? ["-p", t.port] : []), t.user ? `${t.user}@${t.host}` : t.host, `git-upload-pack ${shq(t.path)}`];
  mkdirSync(dirname(auth.knownHostsPath), { recursive: true, mode: 0o700 });
  const proc = Bun.spawn(["sh", "-c", `${sshCommand(auth, deadline.left())} "$@"`, "sh", ...args], {
    env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    // its own process group, so the deadline kills ssh and whatever it started
    detached: true,
  });
  const kill = () => {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(kill, deadline.left());
  let stderr = "";
  const errDone = (async () => {
    for await (const c of proc.stderr as ReadableStream<Uint8Array>) {
      if (stderr.length < MAX_STDERR) stderr += new TextDecoder().decode(c);
    }
  })().catch(() => {});
  const reader = new PktReader(proc.stdout as ReadableStream<Uint8Array>, where);
  /** An ssh failure reads better from its stderr than from a broken stream. */
  const mapped = async (e: unknown) => {
    if (deadline.left() === 0)
      return new GitSyncError("timeout", `${where} did not answer within ${Math.round(deadline.ms / 1000)} s`);
    await Promise.race([proc.exited, Bun.sleep(2000)]);
    await errDone;
    return stderr.trim() ? sshError(stderr, where) : e;
  };
  return {
    async advertisement(want) {
      try {
        return await readAdvertisement(reader, where, false, "git-upload-pack", want);
      } catch (e) {
        throw await mapped(e);
      }
    },
    async request(body) {
      proc.stdin.write(body);
      await proc.stdin.end();
      return reader;
    },
    close() {
      clearTimeout(timer);
      try {
        // no request: a flush ends the exchange cleanly
        proc.stdin.write(FLUSH);
        void proc.stdin.end();
      } catch {
        // stdin already closed after a request
      }
      setTimeout(kill, 5000).unref?.();
      void proc.exited.then(() => kill());
    },
  };
}

/** A Transport for an SSH remote (`ssh://` or `user@host:path`). */
export function sshTransport(
  paths: RepoPaths,
  remote: RemoteSpec,
  auth: RemoteAuth,
  timeoutMs: number,
  limits: GitLimits = DEFAULT_LIMITS,
): Transport {
  if (auth.kind !== "ssh")
    throw new GitSyncError("unsupported_remote", "an SSH remote needs ssh_key_path (or the system default key), not a token");
  const where = remote.where;
  const env: Record<string, string> = {
    PATH: SAFE_PATH,
    HOME: process.env.HOME ?? "/nonexistent",
    LANG: "C",
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_SSH_VARIANT: "ssh",
    GIT_SSH_COMMAND: sshCommand(auth, timeoutMs),
  };
  if (!auth.keyPath && process.env.SSH_AUTH_SOCK) env.SSH_AUTH_SOCK = process.env.SSH_AUTH_SOCK;
  const expired = (what: string) =>
    new GitSyncError("timeout", `${where} did not finish ${what} within ${Math.round(timeoutMs / 1000)} s`);

  const run = async (args: string[], ms = timeoutMs) => {
    mkdirSync(dirname(auth.knownHostsPath), { recursive: true, mode: 0o700 });
    const proc = Bun.spawn(
      [
        "git",
        `--git-dir=${paths.gitdir}`,
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "protocol.allow=never",
        "-c",
        "protocol.ssh.allow=always",
        "-c",
        "credential.helper=",
        "-c",
        "core.askPass=",
        ...args,
      ],
      // its own process group, so the deadline kills ssh too (it holds the pipes open after git dies)
      { env, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true },
    );
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-proc.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, ms);
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]).finally(() => clearTimeout(timer));
    if (timedOut) throw new GitSyncError("timeout", `${where} did not answer within ${Math.round(ms / 1000)} s`);
    return { stdout, stderr, code };
  };

  return {
    async listRefs(want?: string): Promise<RemoteRef[]> {
      const conn = sshConnection(remote, auth, env, deadlineOf(timeoutMs, expired));
      try {
        return listed(await conn.advertisement(want));
      } finally {
        conn.close();
      }
    },

    fetch(branch: string, d?: Deadline): Promise<Fetched> {
      const dl = d ?? deadlineOf(timeoutMs, expired);
      return fetchBranch(sshConnection(remote, auth, env, dl), { gitdir: paths.gitdir, branch, limits, deadline: dl, where });
    },

    async push(branch: string, within?: Deadline): Promise<void> {
      const ms = within ? Math.max(1, Math.min(timeoutMs, within.left())) : timeoutMs;
      const r = await run(["push", "--porcelain", "origin", `refs/heads/${branch}:refs/heads/${branch}`], ms);
      if (r.code === 0) return;
      const rejected = r.stdout.split("\n").find((l) => l.startsWith("!"));
      if (rejected && /non-fast-forward|fetch first|stale info/.test(rejected))
        throw sshError("[rejected] non-fast-forward", where);
      if (rejected)
        throw new GitSyncError(
          "failed",
          `the remote ${where} refused the push (${shownText(rejected.split("\t")[2] ?? "no reason given", 120)})`,
        );
      throw sshError(r.stderr, where);
    },
  };
}
