/**
 * A throwaway Debian machine with systemd as PID 1, for running install.sh and the unit for real: a container whose
 * root is a few hundred kilobytes of /etc made here, with this host's /usr mounted read-only (Debian 12 is merged-usr,
 * so that brings systemd, sh, curl, python3, the Docker CLI and Compose) and the host's Docker socket mounted in.
 * Host units that would reach past the container (udev, binfmt, sysctl, module loading, dockerd itself) are masked.
 * Not --privileged: every capability but CAP_SYS_RESOURCE (which some hosts' dockerd lacks), no seccomp or AppArmor
 * profile, the cgroup tree writable with the host's cgroup namespace (what systemd needs on cgroup v1 and v2).
 */
import { mkdirSync, readdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { until } from "../../helpers/http";
import { exec, type Run } from "../../helpers/release";
import { tempDir } from "../../helpers/tmp";

const IMAGE = "sundeck-test/systemd-root:latest";
const DOCKER_SOCK = "/var/run/docker.sock";

/** Units of this host that must not start in the box: they act on the host kernel, devices or Docker. */
const MASKED = [
  "dbus.service",
  "dbus.socket",
  "systemd-logind.service",
  "getty.target",
  "console-getty.service",
  "systemd-firstboot.service",
  "docker.service",
  "docker.socket",
  "containerd.service",
  "systemd-udevd.service",
  "systemd-udevd-control.socket",
  "systemd-udevd-kernel.socket",
  "systemd-udev-trigger.service",
  "systemd-udev-settle.service",
  "systemd-binfmt.service",
  "proc-sys-fs-binfmt_misc.automount",
  "proc-sys-fs-binfmt_misc.mount",
  "systemd-sysctl.service",
  "systemd-modules-load.service",
  "sys-kernel-config.mount",
  "sys-kernel-debug.mount",
  "sys-kernel-tracing.mount",
  "sys-fs-fuse-connections.mount",
  "dev-hugepages.mount",
  "kmod-static-nodes.service",
  "systemd-remount-fs.service",
  "ssh.service",
  "ssh.socket",
  "postgresql.service",
  "redis-server.service",
  "mariadb.service",
];

/** Host files the root needs: name lookups, useradd's defaults, the loader's cache, /usr/bin's alternatives links. */
const FROM_HOST_ETC = [
  "nsswitch.conf",
  "login.defs",
  "ld.so.conf",
  "ld.so.cache",
  "ld.so.conf.d",
  "alternatives",
  "pam.d",
  "security",
];

/** Why this host cannot run the box, or null when it can. */
export async function boxUnsupported(): Promise<string | null> {
  for (const link of ["/bin", "/lib", "/sbin"]) {
    if (realpathSync(link) !== `/usr${link}`) return `${link} is not merged into /usr`;
  }
  for (const tool of ["/lib/systemd/systemd", "/usr/bin/python3", "/usr/bin/tar"]) {
    if (!statSync(tool, { throwIfNoEntry: false })) return `${tool} is missing`;
  }
  if ((await exec(["docker", "info"])).code !== 0) return "no docker engine answers";
  return null;
}

/** Make (or remake) the root image: /etc as above, the /usr links, empty /var, /run, /tmp. Takes about a second. */
async function buildImage(): Promise<void> {
  const root = tempDir("sundeck-systemd-root-");
  for (const d of [
    "etc/systemd/system",
    "usr/local/bin",
    "var/lib",
    "var/log",
    "var/tmp",
    "var/cache",
    "tmp",
    "root",
    "run",
    "proc",
    "sys",
    "dev",
    "srv",
    "opt",
    "mnt",
    "home",
  ]) {
    mkdirSync(join(root, d), { recursive: true });
  }
  for (const [link, to] of [
    ["bin", "usr/bin"],
    ["lib", "usr/lib"],
    ["lib64", "usr/lib64"],
    ["sbin", "usr/sbin"],
    ["var/run", "/run"],
    ["var/lock", "/run/lock"],
    ["etc/os-release", "../usr/lib/os-release"],
    ["etc/systemd/system/default.target", "/usr/lib/systemd/system/multi-user.target"],
  ]) {
    symlinkSync(to, join(root, link));
  }
  for (const unit of MASKED) symlinkSync("/dev/null", join(root, "etc/systemd/system", unit));
  const docker = statSync(DOCKER_SOCK).gid;
  writeFileSync(
    join(root, "etc/passwd"),
    "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
  );
  writeFileSync(join(root, "etc/shadow"), "root:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n", { mode: 0o640 });
  writeFileSync(join(root, "etc/group"), `root:x:0:\nnogroup:x:65534:\ndocker:x:${docker}:\n`);
  writeFileSync(join(root, "etc/gshadow"), "root:*::\nnogroup:*::\ndocker:!::\n", { mode: 0o640 });
  // empty: systemd makes a fresh machine id at boot
  writeFileSync(join(root, "etc/machine-id"), "");
  const copy = await exec([
    "cp",
    "-a",
    ...FROM_HOST_ETC.map((f) => `/etc/${f}`).filter((f) => statSync(f, { throwIfNoEntry: false })),
    join(root, "etc"),
  ]);
  if (copy.code !== 0) throw new Error(`copying /etc files failed: ${copy.stderr}`);
  const made = await exec(["sh", "-c", `tar -C '${root}' -c . | docker import - ${IMAGE}`]);
  if (made.code !== 0) throw new Error(`docker import failed: ${made.stderr}`);
}

/** A running box; every call goes through `docker exec` as root. */
export interface Box {
  name: string;
  /** Run a shell command inside the box. */
  sh(script: string): Promise<Run>;
  /** What the box's console (systemd) and its journal say, for failure messages. */
  logs(): Promise<string>;
  remove(): Promise<void>;
}

/** Start a box with `mounts` (host path -> box path, read-only) and wait until systemd has booted. */
export async function startBox(mounts: Record<string, string>): Promise<Box> {
  await buildImage();
  const name = `sundeck-systemd-${process.pid}`;
  await exec(["docker", "rm", "-f", name]);
  const args = ["docker", "run", "-d", "-t", "--name", name, "--hostname", "sundeck-box"];
  args.push("--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE");
  args.push(
    "--security-opt",
    "seccomp=unconfined",
    "--security-opt",
    "apparmor=unconfined",
    "--security-opt",
    "systempaths=unconfined",
  );
  args.push("--cgroupns=host", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw");
  args.push("--tmpfs", "/run:exec,mode=755", "--tmpfs", "/tmp:exec,mode=1777", "-e", "container=docker");
  // the host's /usr, except /usr/local: that is where install.sh puts the binary, in the box's own writable root
  for (const d of readdirSync("/usr")) if (d !== "local") args.push("-v", `/usr/${d}:/usr/${d}:ro`);
  // a Docker CLI or Compose installed under /usr/local on the host goes in by itself
  for (const tool of ["docker", "docker-compose"]) {
    const at = (await exec(["sh", "-c", `command -v ${tool}`])).stdout.trim();
    if (at.startsWith("/usr/local/")) args.push("-v", `${realpathSync(at)}:${at}:ro`);
  }
  args.push("-v", `${DOCKER_SOCK}:/run/docker.sock`);
  for (const [from, to] of Object.entries(mounts)) args.push("-v", `${from}:${to}:ro`);
  args.push(IMAGE, "/lib/systemd/systemd");
  const run = await exec(args);
  if (run.code !== 0) throw new Error(`the box did not start: ${run.stderr}`);

  const box: Box = {
    name,
    sh: (script) => exec(["docker", "exec", name, "sh", "-c", script]),
    logs: async () => {
      const console = await exec(["docker", "logs", name]);
      const journal = await exec(["docker", "exec", name, "journalctl", "--no-pager", "-n", "80"]);
      return `${console.stdout}${console.stderr}\n--- journal\n${journal.stdout}`;
    },
    remove: async () => {
      await exec(["docker", "rm", "-f", "-v", name]);
    },
  };
  try {
    // "degraded" still boots to multi-user (some host unit failed); the failure message shows which
    await until(async () => /^(running|degraded)$/m.test((await box.sh("systemctl is-system-running")).stdout), {
      timeout: 60_000,
      every: 200,
      what: "systemd to finish booting in the box",
    });
  } catch (e) {
    const why = `${(e as Error).message}\n${await box.logs()}`;
    await box.remove();
    throw new Error(why);
  }
  return box;
}
