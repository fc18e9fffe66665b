/**
 * The arm64 release builds run, on an x64 machine, under qemu-user (qemu-aarch64-static, no binfmt registration
 * needed): `sundeck-linux-arm64` on Debian's cross glibc for aarch64, and `sundeck-linux-arm64-musl` on bookworm's
 * arm64 musl, each running `version` with the baked-in version and `serve` answering /api/health, READY=1 through its
 * libc (bun:ffi, aarch64 code under emulation) and STOPPING=1 then exit 0 on SIGTERM. Like musl.test.ts, the musl
 * build loads Debian's aarch64 libstdc++ and libgcc_s (built for glibc) with musl-shim.c, cross-compiled, supplying
 * their glibc-only symbols: Bun's arm64 musl runtime and Sundeck's code, not Alpine's libstdc++. Packages: qemu-user-static
 * libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross gcc-aarch64-linux-gnu, and
 * `sh scripts/test-musl-arm64.sh` (the arm64 musl, unpacked to /opt/sundeck-test/musl-arm64). On an arm64 machine
 * the install tests and musl.test.ts run these builds natively instead.
 */
import { beforeAll, describe, expect, it } from "bun:test";
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { exec, REPO } from "../../helpers/release";
import { tempDir } from "../../helpers/tmp";
import { checkServe } from "./serve-check";

const VERSION = "0.9.3-arm64-test";
const QEMU = "/usr/bin/qemu-aarch64-static";
const GLIBC_ROOT = "/usr/aarch64-linux-gnu";
const MUSL_ROOT = process.env.SUNDECK_TEST_MUSL_ARM64 ?? "/opt/sundeck-test/musl-arm64";
const CROSS_GCC = "/usr/bin/aarch64-linux-gnu-gcc";
const work = tempDir("sundeck-arm64-");
const lib = join(work, "musl-lib");
const shim = join(lib, "libglibcshim.so");
/** A start under emulation on 2 loaded cores took 16-17 s to /api/health; this leaves room for a slower CI machine. */
const READY_TIMEOUT = 120_000;

const glibc = [QEMU, "-L", GLIBC_ROOT, join(work, "sundeck-linux-arm64")];
const musl = [QEMU, "-L", MUSL_ROOT, join(work, "sundeck-linux-arm64-musl")];
// the shim is preloaded: Debian's aarch64 libstdc++ names no library it could stand in for (on x64 it names glibc's loader)
const muslEnv = { LD_LIBRARY_PATH: lib, LD_PRELOAD: shim };

describe.skipIf(process.arch === "arm64")("arm64 release builds under qemu-user", () => {
  beforeAll(async () => {
    for (const [path, how] of [
      [QEMU, "apt-get install qemu-user-static"],
      [join(GLIBC_ROOT, "lib/ld-linux-aarch64.so.1"), "apt-get install libc6-arm64-cross"],
      [join(GLIBC_ROOT, "lib/libstdc++.so.6"), "apt-get install libstdc++6-arm64-cross"],
      [join(GLIBC_ROOT, "lib/libgcc_s.so.1"), "apt-get install libgcc-s1-arm64-cross"],
      [CROSS_GCC, "apt-get install gcc-aarch64-linux-gnu"],
      [join(MUSL_ROOT, "lib/ld-musl-aarch64.so.1"), `sh scripts/test-musl-arm64.sh ${MUSL_ROOT}`],
    ]) {
      if (!existsSync(path)) throw new Error(`${path} is missing: ${how}`);
    }
    const built = await exec(["bun", "run", "scripts/release.ts"], {
      cwd: REPO,
      env: {
        SUNDECK_RELEASE_TARGETS: "linux-arm64,linux-arm64-musl",
        SUNDECK_BYTECODE: "0",
        SUNDECK_VERSION: VERSION,
        SUNDECK_RELEASE_DIR: work,
      },
    });
    if (built.code !== 0) throw new Error(`release build failed: ${built.stderr}${built.stdout}`);

    mkdirSync(lib);
    for (const name of ["libstdc++.so.6", "libgcc_s.so.1"]) copyFileSync(join(GLIBC_ROOT, "lib", name), join(lib, name));
    // -nostdlib: no glibc start files or libc.so.6 dependency; its libc calls bind to musl's when loaded
    const cc = await exec([CROSS_GCC, "-shared", "-fPIC", "-O2", "-nostdlib", "-o", shim, join(import.meta.dir, "musl-shim.c")]);
    if (cc.code !== 0) throw new Error(`aarch64-linux-gnu-gcc failed: ${cc.stderr}`);
  }, 180_000);

  it("sundeck-linux-arm64 runs `version` on aarch64 glibc", async () => {
    const r = await exec([...glibc, "version"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toStartWith(`sundeck ${VERSION} (`);
  }, 60_000);

  it("sundeck-linux-arm64 serves /api/health, sends READY=1 through glibc, and STOPPING=1 then exits 0 on SIGTERM", async () => {
    await checkServe({
      cmd: glibc,
      work: tempDir("sundeck-arm64-serve-"),
      env: {},
      version: VERSION,
      readyTimeout: READY_TIMEOUT,
    });
  }, 240_000);

  it("sundeck-linux-arm64-musl is a musl executable: it does not start without the C++ runtime, and runs `version` with it", async () => {
    const bare = await exec([...musl, "version"]);
    expect(bare.code).not.toBe(0);
    expect(bare.stderr).toContain("libstdc++.so.6");
    const r = await exec([...musl, "version"], { env: muslEnv });
    expect(r.stderr).toBe("");
    expect(r.stdout).toStartWith(`sundeck ${VERSION} (`);
  }, 60_000);

  it("sundeck-linux-arm64-musl serves /api/health, sends READY=1 through musl's libc, and STOPPING=1 then exits 0 on SIGTERM", async () => {
    await checkServe({
      cmd: musl,
      work: tempDir("sundeck-arm64-musl-serve-"),
      env: muslEnv,
      version: VERSION,
      readyTimeout: READY_TIMEOUT,
    });
  }, 240_000);
});
