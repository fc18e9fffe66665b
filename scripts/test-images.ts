/**
 * Builds the local images the docker tests run (no registry is reachable in CI): `docker import` of a rootfs made from
 * the static busybox. Idempotent: an image that exists is kept unless `--force` is given.
 * Usage: bun scripts/test-images.ts [--force]
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const BUSYBOX = "/bin/busybox";

/** The images the tests use, by reference. */
export const TEST_IMAGES = {
  busybox: "sundeck-test/busybox:latest",
  web: "sundeck-test/web:latest",
} as const;

// The web image traps TERM so `down` is immediate, and writes its hostname into the page so replicas differ.
const WEB_ENTRY = `#!/bin/sh
hostname > /www/index.html
httpd -f -p 8080 -h /www &
pid=$!
trap 'kill $pid 2>/dev/null; exit 0' TERM INT
wait $pid
`;

interface Spec {
  ref: string;
  changes: string[];
  extra?: (root: string) => void;
}

const SPECS: Spec[] = [
  { ref: TEST_IMAGES.busybox, changes: ['CMD ["/bin/sh"]'] },
  {
    ref: TEST_IMAGES.web,
    changes: ['CMD ["/entry.sh"]', "EXPOSE 8080"],
    extra: (root) => {
      writeFileSync(join(root, "entry.sh"), WEB_ENTRY);
      chmodSync(join(root, "entry.sh"), 0o755);
    },
  },
];

/** Build every test image that is missing (all of them with `force`); returns the refs built. */
export async function buildTestImages(opts: { force?: boolean; quiet?: boolean } = {}): Promise<string[]> {
  const say = (s: string) => opts.quiet || console.log(s);
  const todo: Spec[] = [];
  for (const spec of SPECS) {
    if (!opts.force && (await imagePresent(spec.ref))) say(`test image ${spec.ref}: present`);
    else todo.push(spec);
  }
  if (todo.length === 0) return [];
  checkBusybox();
  const built: string[] = [];
  for (const spec of todo) {
    const root = mkdtempSync(join(tmpdir(), "sundeck-rootfs-"));
    try {
      makeRootfs(root);
      spec.extra?.(root);
      const previous = await imageId(spec.ref);
      await importRootfs(root, spec.ref, spec.changes);
      // a forced rebuild leaves the old image untagged: drop it unless a container still uses it
      if (previous) await sh(["docker", "image", "rm", previous]);
      built.push(spec.ref);
      say(`test image ${spec.ref}: built`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  return built;
}

async function imagePresent(ref: string): Promise<boolean> {
  return (await imageId(ref)) !== null;
}

/** The image id of `ref`, or null when it is not present. */
export async function imageId(ref: string): Promise<string | null> {
  const r = await sh(["docker", "image", "inspect", "--format", "{{.Id}}", ref]);
  if (r.code === 0) return r.out.trim();
  if (/no such image/i.test(r.out)) return null;
  throw new Error(`docker image inspect failed (is dockerd running?): ${r.out.trim()}`);
}

/** The rootfs must not need a dynamic loader: refuse a dynamically linked busybox with the package to install. */
function checkBusybox(): void {
  if (!existsSync(BUSYBOX)) throw new Error(`${BUSYBOX} not found: install the Debian package busybox-static`);
  if (hasInterpreter(readFileSync(BUSYBOX))) {
    throw new Error(`${BUSYBOX} is dynamically linked: install the Debian package busybox-static`);
  }
}

/** True when an ELF64 little-endian file has a PT_INTERP program header (a dynamically linked executable). */
function hasInterpreter(elf: Buffer): boolean {
  if (elf.length < 64 || elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) return false;
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const phentsize = elf.readUInt16LE(0x36);
  const phnum = elf.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (at + 4 <= elf.length && elf.readUInt32LE(at) === 3) return true;
  }
  return false;
}

/** A rootfs with the static busybox and its applets, /etc/passwd and /tmp (the base of every test image). */
export function makeRootfs(root: string): void {
  for (const d of ["bin", "etc", "tmp", "www"]) mkdirSync(join(root, d), { recursive: true });
  chmodSync(join(root, "tmp"), 0o1777);
  writeFileSync(join(root, "bin/busybox"), readFileSync(BUSYBOX));
  chmodSync(join(root, "bin/busybox"), 0o755);
  const applets = Bun.spawnSync([BUSYBOX, "--list"]).stdout.toString().split("\n").filter(Boolean);
  for (const a of applets) if (a !== "busybox" && !a.includes("/")) symlinkSync("busybox", join(root, "bin", a));
  writeFileSync(join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n");
  writeFileSync(join(root, "etc/group"), "root:x:0:\n");
  writeFileSync(join(root, "www/index.html"), "hello\n");
}

/** `docker import` a rootfs directory as `ref` with Dockerfile-like `changes`. */
export async function importRootfs(root: string, ref: string, changes: string[], keepOwners = false): Promise<void> {
  const argv = ["docker", "import", ...changes.flatMap((c) => ["-c", c]), "-", ref];
  const owners = keepOwners ? [] : ["--owner=0", "--group=0"];
  const tar = Bun.spawn(["tar", "-C", root, "--numeric-owner", ...owners, "-c", "."], { stdout: "pipe" });
  const imp = Bun.spawn(argv, { stdin: tar.stdout, stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([imp.exited, new Response(imp.stdout).text(), new Response(imp.stderr).text()]);
  if ((await tar.exited) !== 0) throw new Error(`tar of the rootfs failed for ${ref}`);
  if (code !== 0) throw new Error(`docker import ${ref} failed: ${(err || out).trim()}`);
}

async function sh(argv: string[]): Promise<{ code: number; out: string }> {
  try {
    const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
    return { code, out: out + err };
  } catch (e) {
    return { code: 127, out: `${argv[0]}: ${(e as Error).message}` };
  }
}

if (import.meta.main) {
  try {
    await buildTestImages({ force: process.argv.includes("--force") });
  } catch (e) {
    console.error(`test-images: ${(e as Error).message}`);
    process.exit(1);
  }
}
