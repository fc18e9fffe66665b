/**
 * `bun run build`: compile dist/sundeck for this machine (scripts/lib/compile.ts). SUNDECK_OUTFILE, SUNDECK_BYTECODE=0,
 * and SUNDECK_VERSION (a test's second build) override the defaults.
 */
import { buildInfo, compile } from "./lib/compile";

const info = await buildInfo();
const version = process.env.SUNDECK_VERSION || info.version;
const outfile = process.env.SUNDECK_OUTFILE ?? "dist/sundeck";
try {
  await compile({ outfile, version, commit: info.commit, bytecode: process.env.SUNDECK_BYTECODE !== "0" });
} catch (e) {
  console.error((e as Error).message);
  process.exit(1);
}
const size = Bun.file(outfile).size;
console.log(`built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MiB) version ${version} commit ${info.commit}`);
