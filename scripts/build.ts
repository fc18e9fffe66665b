/**
 * `bun run build`: compile dist/sundeck, one self-contained executable with the dashboard embedded, version and
 * commit baked in, and no autoloading of a stray .env or bunfig.toml from the directory it runs in.
 */
import { $ } from "bun";
import pkg from "../package.json";

const commit = (await $`git rev-parse --short=12 HEAD`.nothrow().quiet().text()).trim() || "unknown";
const dirty = (await $`git status --porcelain`.nothrow().quiet().text()).trim() ? "-dirty" : "";
const outfile = process.env.SUNDECK_OUTFILE ?? "dist/sundeck";

const result = await Bun.build({
  entrypoints: ["src/main.ts"],
  minify: true,
  bytecode: process.env.SUNDECK_BYTECODE !== "0",
  sourcemap: "none",
  define: {
    SUNDECK_VERSION: JSON.stringify(pkg.version),
    SUNDECK_COMMIT: JSON.stringify(commit + dirty),
    "process.env.NODE_ENV": JSON.stringify("production"),
  },
  compile: {
    outfile,
    autoloadDotenv: false,
    autoloadBunfig: false,
  },
});
if (!result.success) {
  for (const l of result.logs) console.error(l);
  process.exit(1);
}
const size = Bun.file(outfile).size;
console.log(`built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MiB) version ${pkg.version} commit ${commit}${dirty}`);
