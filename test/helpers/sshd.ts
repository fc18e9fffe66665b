/**
 * A real OpenSSH server for tests (Debian `openssh-server`): `sshd -D -e` on a free loopback port with its own host key,
 * one generated client key and a config of its own, run as the user running the tests. A non-root sshd can only log
 * in its own user (no PAM, no StrictModes: checked by hand with a throwaway user); as root it needs the
 * privilege-separation directory /run/sshd, which Debian's service unit would otherwise make.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { until } from "./http";
import { freePort } from "./pebble";
import { tempDir } from "./tmp";

export const SSHD = "/usr/sbin/sshd";

/** Whether this machine has sshd (`apt-get install openssh-server`; CI installs it, and there the SSH tests never skip). */
export const haveSshd = existsSync(SSHD);

export interface Sshd {
  port: number;
  /** The user the server logs in (the one running the tests). */
  user: string;
  /** Private key the server accepts (OpenSSH format, no passphrase). */
  keyPath: string;
  /** A key the server does not accept. */
  otherKeyPath: string;
  /** The server's public host key line (`ssh-ed25519 AAAA...`). */
  hostKey: string;
  /** `ssh://user@127.0.0.1:port<path>` for an absolute path on this machine. */
  url(path: string): string;
  /** What sshd wrote to stderr so far. */
  log(): string;
  stop(): Promise<void>;
}

function keygen(path: string): void {
  const p = Bun.spawnSync(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sundeck-test", "-f", path], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (p.exitCode !== 0) throw new Error(`ssh-keygen failed: ${p.stderr.toString()}`);
}

/** Start sshd; resolves once it accepts TCP connections. */
export async function startSshd(): Promise<Sshd> {
  const dir = tempDir("sundeck-sshd-");
  const port = await freePort();
  // Bun's os.userInfo().username says "unknown" here for root: ask id(1)
  const user = Bun.spawnSync(["id", "-un"]).stdout.toString().trim();
  const hostKeyPath = join(dir, "host_ed25519");
  const keyPath = join(dir, "client_ed25519");
  const otherKeyPath = join(dir, "other_ed25519");
  keygen(hostKeyPath);
  keygen(keyPath);
  keygen(otherKeyPath);
  writeFileSync(join(dir, "authorized_keys"), await Bun.file(`${keyPath}.pub`).text(), { mode: 0o600 });
  const config = [
    `Port ${port}`,
    "ListenAddress 127.0.0.1",
    `HostKey ${hostKeyPath}`,
    `PidFile ${join(dir, "sshd.pid")}`,
    `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
    `AllowUsers ${user}`,
    "PubkeyAuthentication yes",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "UsePAM no",
    "StrictModes no",
    "PermitRootLogin prohibit-password",
    "X11Forwarding no",
    "AllowTcpForwarding no",
    "PrintMotd no",
    "LogLevel VERBOSE",
  ].join("\n");
  const configPath = join(dir, "sshd_config");
  writeFileSync(configPath, `${config}\n`, { mode: 0o600 });
  // root's sshd refuses to start without its privilege-separation directory (Debian's service unit makes it)
  if (process.getuid?.() === 0) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });

  const logPath = join(dir, "sshd.log");
  const proc = Bun.spawn([SSHD, "-D", "-e", "-f", configPath], { stdout: "ignore", stderr: Bun.file(logPath) });
  const text = () => (existsSync(logPath) ? readFileSync(logPath, "utf8") : "");
  try {
    await until(() => text().includes(`Server listening on 127.0.0.1 port ${port}`) || proc.exitCode !== null, {
      timeout: 10_000,
      what: `sshd on ${port}`,
    });
    if (proc.exitCode !== null) throw new Error(`sshd exited ${proc.exitCode}: ${text()}`);
  } catch (e) {
    proc.kill();
    throw e;
  }
  const hostKey = (await Bun.file(`${hostKeyPath}.pub`).text()).split(" ").slice(0, 2).join(" ");
  return {
    port,
    user,
    keyPath,
    otherKeyPath,
    hostKey,
    url: (path) => `ssh://${user}@127.0.0.1:${port}${path}`,
    log: text,
    stop: async () => {
      proc.kill();
      await proc.exited;
    },
  };
}
