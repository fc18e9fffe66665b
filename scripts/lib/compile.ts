/**
 * The one way Sundeck is compiled: src/main.ts into a self-contained executable with the dashboard embedded,
 * version and commit baked in (`define`), and no autoloading of a stray .env or bunfig.toml from where it runs.
 * scripts/build.ts (the host binary) and scripts/release.ts (every Linux target) both call it.
 */
import { $ } from "bun";
import pkg from "../../package.json";

/** Version and commit to bake in: package.json's version, the short commit with -dirty when the tree has changes. */
export async function buildInfo(): Promise<{ version: string; commit: string }> {
  const commit = (await $`git rev-parse --short=12 HEAD`.nothrow().quiet().text()).trim() || "unknown";
  const dirty = (await $`git status --porcelain`.nothrow().quiet().text()).trim() ? "-dirty" : "";
  return { version: pkg.version, commit: commit + dirty };
}

/** Release file suffix -> `bun build --compile` target. */
export const TARGETS: Record<string, string> = {
  "linux-x64": "bun-linux-x64",
  "linux-arm64": "bun-linux-arm64",
  "linux-x64-musl": "bun-linux-x64-musl",
  "linux-arm64-musl": "bun-linux-arm64-musl",
};

export interface CompileOptions {
  outfile: string;
  version: string;
  commit: string;
  /** A `bun build --compile` target (`bun-linux-arm64-musl`); the host when omitted. */
  target?: string;
  /** The release file suffix (`linux-arm64-musl`) baked in for `sundeck upgrade`; "" for a host build. */
  releaseName?: string;
  /** Bytecode makes start faster; off for quick test builds. */
  bytecode?: boolean;
}

/** Compile one executable; throws with Bun's messages when the build fails. */
export async function compile(o: CompileOptions): Promise<void> {
  const result = await Bun.build({
    entrypoints: ["src/main.ts"],
    minify: true,
    bytecode: o.bytecode ?? true,
    sourcemap: "none",
    define: {
      SUNDECK_VERSION: JSON.stringify(o.version),
      SUNDECK_COMMIT: JSON.stringify(o.commit),
      SUNDECK_TARGET: JSON.stringify(o.releaseName ?? ""),
      "process.env.NODE_ENV": JSON.stringify("production"),
    },
    compile: {
      outfile: o.outfile,
      ...(o.target ? { target: o.target as Bun.Build.CompileTarget } : {}),
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
  });
  if (!result.success) throw new Error(`build of ${o.outfile} failed:\n${result.logs.map(String).join("\n")}`);
}
