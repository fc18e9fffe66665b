/**
 * `bun run scripts/check-release.ts [--no-build]`: build every release target (scripts/release.ts) and check what a
 * server would get: SHA256SUMS verifies, each binary is an ELF for its CPU with the right dynamic loader (glibc or
 * musl), the host's binary runs `version` with the baked-in version, the arm64 one runs under qemu-user when it is
 * installed (qemu-user-static and libc6-arm64-cross on Debian), and install.sh passes shellcheck. Exits 1 on a failure.
 */
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { $ } from "bun";
import pkg from "../package.json";
import { TARGETS } from "./lib/compile";

const dir = process.env.SUNDECK_RELEASE_DIR ?? "dist/release";
if (!process.argv.includes("--no-build")) await $`bun run scripts/release.ts`.env({ ...process.env, SUNDECK_RELEASE_DIR: dir });

const failures: string[] = [];
const check = (ok: boolean, line: string) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${line}`);
  if (!ok) failures.push(line);
};

/** CPU (e_machine) and dynamic loader (PT_INTERP) of an ELF64 little-endian file. */
function elf(path: string): { machine: string; interp: string } {
  const fd = openSync(path, "r");
  try {
    const read = (off: number, len: number) => {
      const b = Buffer.alloc(len);
      readSync(fd, b, 0, len, off);
      return b;
    };
    const h = read(0, 64);
    if (h.readUInt32BE(0) !== 0x7f454c46) return { machine: "not ELF", interp: "" };
    const machine = ({ 62: "x64", 183: "arm64" } as Record<number, string>)[h.readUInt16LE(0x12)] ?? "other";
    const phoff = Number(h.readBigUInt64LE(0x20));
    const [size, count] = [h.readUInt16LE(0x36), h.readUInt16LE(0x38)];
    for (let i = 0; i < count; i++) {
      const ph = read(phoff + i * size, size);
      if (ph.readUInt32LE(0) === 3) {
        const s = read(Number(ph.readBigUInt64LE(8)), Number(ph.readBigUInt64LE(32)));
        return { machine, interp: s.toString("latin1").replace(/\0+$/, "") };
      }
    }
    return { machine, interp: "" };
  } finally {
    closeSync(fd);
  }
}

const sums = await $`sha256sum -c SHA256SUMS`.cwd(dir).nothrow().quiet();
check(sums.exitCode === 0, `sha256sum -c SHA256SUMS in ${dir}`);
const loaders: Record<string, string> = {
  "linux-x64": "/lib64/ld-linux-x86-64.so.2",
  "linux-arm64": "/lib/ld-linux-aarch64.so.1",
  "linux-x64-musl": "/lib/ld-musl-x86_64.so.1",
  "linux-arm64-musl": "/lib/ld-musl-aarch64.so.1",
};
for (const name of Object.keys(TARGETS)) {
  const file = join(dir, `sundeck-${name}`);
  const got = elf(file);
  const cpu = name.split("-")[1]!;
  check(got.machine === cpu && got.interp === loaders[name], `${file}: ${got.machine}, loader ${got.interp}`);
}

const expected = `sundeck ${process.env.SUNDECK_VERSION || pkg.version} (`;
const host = await $`${join(dir, `sundeck-linux-${process.arch}`)} version`.nothrow().quiet();
check(host.stdout.toString().startsWith(expected), `sundeck-linux-${process.arch} version: ${host.stdout.toString().trim()}`);

const qemu = ["qemu-aarch64-static", "qemu-aarch64"].find((q) => Bun.which(q));
if (process.arch === "arm64") {
  // the host binary above was the arm64 one
} else if (qemu && existsSync("/usr/aarch64-linux-gnu")) {
  const arm = await $`${qemu} -L /usr/aarch64-linux-gnu ${join(dir, "sundeck-linux-arm64")} version`.nothrow().quiet();
  check(arm.stdout.toString().startsWith(expected), `sundeck-linux-arm64 under ${qemu}: ${arm.stdout.toString().trim()}`);
} else {
  console.log("skip sundeck-linux-arm64 run: install qemu-user-static and libc6-arm64-cross to run it under qemu");
}
console.log(
  "note the musl builds link libstdc++.so.6 and, through it, libgcc_s (Alpine: apk add libstdc++ libgcc); the x64 one runs on Debian's musl in test/integration/install/musl.test.ts, both arm64 ones under qemu-user in arm64.test.ts",
);

const sc = await $`shellcheck -s sh ${join(dir, "install.sh")}`.nothrow().quiet();
check(sc.exitCode === 0, `shellcheck install.sh${sc.exitCode ? `: ${sc.stdout}` : ""}`);
if (failures.length) process.exit(1);
