/**
 * `bun run scripts/image.ts [--binary dist/sundeck] [--tag sundeck:local] [--docker-cli PATH|none]
 * [--compose-plugin PATH|none]`: a minimal container image of Sundeck without a registry or a base image. A rootfs
 * holds the compiled binary and exactly the shared libraries `ldd` says it links (plus the loader), CA certificates,
 * passwd/group, an empty /tmp, and the Docker CLI with the compose v2 plugin when this host has them (each with its own
 * ldd closure; static Go binaries have none); `docker import` turns it into an image. See docs/container-image.md.
 */

import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { $ } from "bun";

const { values: opts } = parseArgs({
  options: {
    binary: { type: "string", default: "dist/sundeck" },
    tag: { type: "string", default: "sundeck:local" },
    "docker-cli": { type: "string" },
    "compose-plugin": { type: "string" },
  },
});

/** Where the compose v2 plugin is installed on common distributions (Docker's packages, Debian, a user's own). */
const PLUGIN_DIRS = [
  join(homedir(), ".docker/cli-plugins"),
  "/usr/local/lib/docker/cli-plugins",
  "/usr/local/libexec/docker/cli-plugins",
  "/usr/lib/docker/cli-plugins",
  "/usr/libexec/docker/cli-plugins",
];
/** Where the image keeps the plugin: the first directory the docker CLI searches on Linux. */
const IMAGE_PLUGIN = "/usr/libexec/docker/cli-plugins/docker-compose";

const fail = (msg: string): never => {
  console.error(`image: ${msg}`);
  process.exit(1);
};

/** The shared objects `path` links, with the loader: absolute paths, empty for a static executable. */
async function linked(path: string): Promise<string[]> {
  const out = await $`ldd ${path}`.nothrow().quiet();
  const text = out.stdout.toString() + out.stderr.toString();
  if (/not a dynamic executable|statically linked/.test(text)) return [];
  if (out.exitCode !== 0) fail(`ldd ${path} failed: ${text.trim()}`);
  const libs: string[] = [];
  for (const line of text.split("\n")) {
    // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (/=>\s*not found/.test(line)) fail(`${path} links a library this host lacks: ${line.trim()}`);
    if (m) libs.push(m[1]);
  }
  return libs;
}

/** Copy a file's content (symlinks followed) to the same or another path under `root`. */
function place(root: string, from: string, to = from, mode = 0o755): void {
  const dest = join(root, to);
  mkdirSync(dirname(dest), { recursive: true });
  copyFileSync(realpathSync(from), dest);
  chmodSync(dest, mode);
}

/** An executable and its ldd closure into the rootfs. */
async function placeExecutable(root: string, from: string, to: string): Promise<void> {
  place(root, from, to);
  for (const lib of await linked(from)) if (!existsSync(join(root, lib))) place(root, lib);
}

/** The explicit path, "none", or the first candidate that exists. */
function pick(flag: string | undefined, candidates: string[]): string | null {
  if (flag === "none") return null;
  if (flag) return existsSync(flag) ? flag : fail(`${flag} does not exist`);
  return candidates.find((p) => existsSync(p)) ?? null;
}

const binary = resolve(opts.binary);
if (!existsSync(binary)) fail(`${opts.binary} is missing: run \`bun run build\` first`);
const version = (await $`${binary} version`.nothrow().quiet().text()).trim().split(/\s+/)[1] ?? "unknown";

const root = mkdtempSync(join(tmpdir(), "sundeck-rootfs-"));
try {
  await placeExecutable(root, binary, "/usr/local/bin/sundeck");
  const dockerCli = pick(opts["docker-cli"], [Bun.which("docker") ?? ""].filter(Boolean));
  const compose = pick(
    opts["compose-plugin"],
    PLUGIN_DIRS.map((d) => join(d, "docker-compose")),
  );
  if (dockerCli) await placeExecutable(root, dockerCli, "/usr/local/bin/docker");
  if (compose) await placeExecutable(root, compose, IMAGE_PLUGIN);

  const caFile = "/etc/ssl/certs/ca-certificates.crt";
  if (!existsSync(caFile)) fail(`${caFile} is missing: install ca-certificates`);
  place(root, caFile, caFile, 0o644);
  const etc = (name: string, text: string) => writeFileSync(join(root, "etc", name), text, { mode: 0o644 });
  etc("passwd", "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n");
  etc("group", "root:x:0:\nnogroup:x:65534:\n");
  etc("nsswitch.conf", "hosts: files dns\n");
  for (const [dir, mode] of [
    ["tmp", 0o1777],
    ["root", 0o700],
    ["var/lib/sundeck", 0o700],
    ["etc/sundeck", 0o755],
  ] as const) {
    mkdirSync(join(root, dir), { recursive: true });
    chmodSync(join(root, dir), mode);
  }

  const changes = [
    "ENV PATH=/usr/local/bin:/usr/bin:/bin",
    "ENV HOME=/root",
    "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
    // the embedded default config, made usable in a container: state in the volume, the API reachable through -p
    "ENV SUNDECK_DATA_DIR=/var/lib/sundeck",
    "ENV SUNDECK_APPS_DIR=/var/lib/sundeck/apps",
    "ENV SUNDECK_MANAGEMENT_ADDR=0.0.0.0",
    "WORKDIR /var/lib/sundeck",
    "VOLUME /var/lib/sundeck",
    "EXPOSE 80 443 8080 8443",
    `LABEL org.opencontainers.image.title=sundeck org.opencontainers.image.version=${version}`,
    'ENTRYPOINT ["/usr/local/bin/sundeck"]',
    'CMD ["serve"]',
  ];
  const tar = Bun.spawn(["tar", "-C", root, "--owner=0", "--group=0", "--numeric-owner", "-c", "."], { stdout: "pipe" });
  const imp = Bun.spawn(["docker", "import", ...changes.flatMap((c) => ["-c", c]), "-", opts.tag], {
    stdin: tar.stdout,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, err] = await Promise.all([imp.exited, new Response(imp.stderr).text()]);
  if ((await tar.exited) !== 0 || code !== 0) fail(`docker import failed: ${err.trim()}`);
  const size = (await $`docker image inspect -f {{.Size}} ${opts.tag}`.quiet().text()).trim();
  console.log(`built ${opts.tag} (${(Number(size) / 1024 / 1024).toFixed(1)} MiB) sundeck ${version}`);
  console.log(`  docker CLI: ${dockerCli ?? "not included (mount one at /usr/local/bin/docker)"}`);
  console.log(`  compose plugin: ${compose ?? `not found on this host (mount a static docker-compose at ${IMAGE_PLUGIN})`}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
