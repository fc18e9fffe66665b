/**
 * SSH remotes through the system `git` (isomorphic-git has no SSH transport). The child gets a minimal environment
 * (no inherited GIT_* variables, no user or system git config, no prompts, hooks off, only the ssh protocol allowed)
 * and an ssh command that uses ssh_key_path alone and pins the host key at first contact (accept-new) in a
 * known_hosts file of ours, so a later change of host key is refused rather than trusted.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { GitSyncError, sshError } from "./errors";
import type { RepoPaths } from "./igit";
import type { RemoteSpec } from "./remote";
import type { RemoteAuth, RemoteRef, Transport } from "./transport";

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

/** A Transport for an SSH remote (`ssh://` or `user@host:path`). */
export function sshTransport(paths: RepoPaths, remote: RemoteSpec, auth: RemoteAuth, timeoutMs: number): Transport {
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

  const run = async (args: string[]) => {
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
    }, timeoutMs);
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]).finally(() => clearTimeout(timer));
    if (timedOut) throw new GitSyncError("timeout", `${where} did not answer within ${Math.round(timeoutMs / 1000)} s`);
    return { stdout, stderr, code };
  };

  return {
    async listRefs(): Promise<RemoteRef[]> {
      const r = await run(["ls-remote", "origin"]);
      if (r.code !== 0) throw sshError(r.stderr, where);
      return r.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [oid, ref] = line.split("\t");
          return { oid: oid!, ref: ref! };
        })
        .filter((r) => r.ref !== "HEAD" && !r.ref.endsWith("^{}"));
    },

    async fetch(branch: string): Promise<string | null> {
      const tracking = `refs/remotes/origin/${branch}`;
      const r = await run(["fetch", "--no-tags", "--no-write-fetch-head", "origin", `+refs/heads/${branch}:${tracking}`]);
      if (r.code !== 0) {
        if (!/couldn't find remote ref/i.test(r.stderr)) throw sshError(r.stderr, where);
        await run(["update-ref", "-d", tracking]);
        return null;
      }
      const head = await run(["rev-parse", "--verify", "-q", tracking]);
      return head.code === 0 ? head.stdout.trim() : null;
    },

    async push(branch: string): Promise<void> {
      const r = await run(["push", "--porcelain", "origin", `refs/heads/${branch}:refs/heads/${branch}`]);
      if (r.code === 0) return;
      const rejected = r.stdout.split("\n").find((l) => l.startsWith("!"));
      if (rejected && /non-fast-forward|fetch first|stale info/.test(rejected))
        throw sshError("[rejected] non-fast-forward", where);
      if (rejected)
        throw new GitSyncError(
          "failed",
          `the remote ${where} refused the push (${rejected.split("\t")[2] ?? "no reason given"})`,
        );
      throw sshError(r.stderr, where);
    },
  };
}
