/**
 * The one way Sundeck is compiled: src/main.ts into a self-contained executable with the dashboard embedded,
 * version and commit baked in (`define`), and no autoloading of a stray .env or bunfig.toml from where it runs.
 * scripts/build.ts (the host binary) and scripts/release.ts (every Linux target) both call it.
 *
 * Three settings keep the running server small (issue 16, measured in docs/benchmarks.md "Resident memory"):
 * - code splitting (ESM chunks): each command and each `import()`ed module (git, ACME, backup strategies, the CLI)
 *   is its own chunk, loaded only when used, so `serve` holds the bytecode and functions of what it runs;
 * - the bytecode laid out by bytecode-order.txt, the functions a `serve` run used (idle, 20 deploys, API calls),
 *   recorded by `scripts/bench/memory.ts --bytecode-order-out`: they sit together at the front, so fewer pages of the
 *   executable are touched; a profile from an older build still applies (unknown functions are laid out after);
 * - a JIT tier-up policy of 10 for the process's life: code must run ten times as often before JavaScriptCore
 *   compiles it, so run-once and rarely run code stays interpreted (less JIT code and compiler state) while the
 *   proxy's hot path still compiles within its first thousands of requests.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { $ } from "bun";
import pkg from "../../package.json";

/** The bytecode layout profile (see the header); the build goes without it when the file is absent. */
export const BYTECODE_ORDER = resolve(import.meta.dir, "bytecode-order.txt");

/** JavaScriptCore's tier-up thresholds times this, for good (Bun.unsafe.setJITPolicy); 1 is the runtime's default. */
export const JIT_POLICY = 10;

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
  const bytecode = o.bytecode ?? true;
  const result = await Bun.build({
    entrypoints: ["src/main.ts"],
    minify: true,
    bytecode,
    // splitting needs ESM; chunks stay inside the executable
    format: "esm",
    splitting: true,
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
      jitPolicy: JIT_POLICY,
      ...(bytecode && existsSync(BYTECODE_ORDER) ? { bytecodeOrder: BYTECODE_ORDER } : {}),
    },
  });
  if (!result.success) throw new Error(`build of ${o.outfile} failed:\n${result.logs.map(String).join("\n")}`);
}
