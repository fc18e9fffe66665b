/**
 * The musl build of this machine's CPU runs under musl's loader and libc (Debian's `musl` package): `version`, and
 * `serve` answering /api/health, telling systemd READY=1 through musl's libc (bun:ffi) and STOPPING=1 on SIGTERM.
 * The build links libstdc++.so.6 (and, through it, libgcc_s.so.1), which Debian has only for glibc: the test loads
 * Debian's copies with musl-shim.c supplying the handful of glibc-only symbols they import. So this proves Bun's musl
 * runtime and Sundeck's code on musl, not Alpine's libstdc++ (which the build is made for).
 */
import { beforeAll, describe, expect, it } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { exec, REPO } from "../../helpers/release";
import { tempDir } from "../../helpers/tmp";
import { checkServe } from "./serve-check";

const CPU = process.arch === "arm64" ? "aarch64" : "x86_64";
const TARGET = `linux-${process.arch}-musl`;
const VERSION = "0.9.2-musl-test";
const work = tempDir("sundeck-musl-");
const bin = join(work, `sundeck-${TARGET}`);
const lib = join(work, "lib");
const env = () => ({ LD_LIBRARY_PATH: lib });

beforeAll(async () => {
  for (const [path, pkg] of [
    [`/lib/ld-musl-${CPU}.so.1`, "musl"],
    ["/usr/bin/musl-gcc", "musl-tools"],
    [`/usr/lib/${CPU}-linux-gnu/libstdc++.so.6`, "libstdc++6"],
  ]) {
    if (!existsSync(path)) throw new Error(`${path} is missing: apt-get install musl musl-dev musl-tools (${pkg})`);
  }
  const built = await exec(["bun", "run", "scripts/release.ts"], {
    cwd: REPO,
    env: { SUNDECK_RELEASE_TARGETS: TARGET, SUNDECK_BYTECODE: "0", SUNDECK_VERSION: VERSION, SUNDECK_RELEASE_DIR: work },
  });
  if (built.code !== 0) throw new Error(`release build failed: ${built.stderr}${built.stdout}`);

  // Debian's libstdc++ and libgcc_s, and the shim they need, on the musl loader's library path
  mkdirSync(lib);
  for (const name of ["libstdc++.so.6", "libgcc_s.so.1"]) copyFileSync(`/usr/lib/${CPU}-linux-gnu/${name}`, join(lib, name));
  const shim = await exec([
    "musl-gcc",
    "-shared",
    "-fPIC",
    "-O2",
    "-o",
    join(lib, "libglibcshim.so"),
    join(import.meta.dir, "musl-shim.c"),
  ]);
  if (shim.code !== 0) throw new Error(`musl-gcc failed: ${shim.stderr}`);
  // libstdc++ names glibc's loader as a dependency: the shim stands in for it
  symlinkSync("libglibcshim.so", join(lib, CPU === "x86_64" ? "ld-linux-x86-64.so.2" : "ld-linux-aarch64.so.1"));
}, 180_000);

describe(`sundeck-${TARGET}`, () => {
  it("is a musl executable: it does not start without the C++ runtime, and runs `version` with it", async () => {
    const bare = await exec([bin, "version"]);
    expect(bare.code).not.toBe(0);
    expect(bare.stderr).toContain("libstdc++.so.6");
    const r = await exec([bin, "version"], { env: env() });
    expect(r.stderr).toBe("");
    expect(r.stdout).toStartWith(`sundeck ${VERSION} (`);
  });

  it("serves /api/health, sends READY=1 through musl's libc, and STOPPING=1 then exits 0 on SIGTERM", async () => {
    await checkServe({ cmd: [bin], work: tempDir("sundeck-musl-serve-"), env: env(), version: VERSION, readyTimeout: 30_000 });
  }, 60_000);
});
