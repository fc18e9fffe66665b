/**
 * `bun run release`: cross-compile Sundeck for every Linux server into dist/release/ (sundeck-linux-x64, -arm64 and
 * their -musl variants, through scripts/lib/compile.ts), with the installer, the systemd unit template it installs,
 * and SHA256SUMS (sha256sum format) over all of them. Bun fetches each target's runtime from the npm registry
 * (@oven/bun-linux-*) once and caches it under ~/.bun/install/cache.
 * SUNDECK_RELEASE_BASE_URL becomes the installer's default --base-url.
 * SUNDECK_RELEASE_TARGETS (comma list, e.g. "linux-x64"), SUNDECK_RELEASE_DIR, SUNDECK_VERSION and
 * SUNDECK_BYTECODE=0 narrow or change a build (tests use them); the default builds all four.
 */
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileSum } from "../src/cli/upgrade-release";
import { buildInfo, compile, TARGETS } from "./lib/compile";

const info = await buildInfo();
const version = process.env.SUNDECK_VERSION || info.version;
const dir = process.env.SUNDECK_RELEASE_DIR ?? "dist/release";
const wanted = (process.env.SUNDECK_RELEASE_TARGETS ?? Object.keys(TARGETS).join(","))
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
for (const w of wanted)
  if (!TARGETS[w]) throw new Error(`unknown release target ${w} (known: ${Object.keys(TARGETS).join(", ")})`);

rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
// one at a time: each compile is CPU- and memory-heavy, and the runtimes download on first use
for (const name of wanted) {
  const outfile = join(dir, `sundeck-${name}`);
  const started = performance.now();
  await compile({
    outfile,
    version,
    commit: info.commit,
    target: TARGETS[name],
    releaseName: name,
    bytecode: process.env.SUNDECK_BYTECODE !== "0",
  });
  const mib = (Bun.file(outfile).size / 1024 / 1024).toFixed(1);
  console.log(`built ${outfile} (${mib} MiB, ${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
// the installer's default release location, when the publisher names one (else it needs --base-url)
const installer = readFileSync("packaging/install.sh", "utf8").replace("@BASE_URL@", process.env.SUNDECK_RELEASE_BASE_URL ?? "");
writeFileSync(join(dir, "install.sh"), installer);
chmodSync(join(dir, "install.sh"), 0o755);
copyFileSync("packaging/systemd/sundeck.service", join(dir, "sundeck.service"));

const lines: string[] = [];
for (const f of readdirSync(dir).sort()) {
  if (f === "SHA256SUMS") continue;
  lines.push(`${await fileSum(join(dir, f))}  ${f}`);
}
await Bun.write(join(dir, "SHA256SUMS"), `${lines.join("\n")}\n`);
console.log(`release ${version} (${info.commit}) in ${dir}: ${wanted.join(", ")}`);
