/** DESIGN.md's dependency rules: no import across a forbidden folder line; the browser bundle is dashboard/ and shared/ only. */
import { describe, expect, it } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { Glob } from "bun";

const ROOT = resolve(import.meta.dir, "../..");

/** Any file of src/ outside the rule's `from` folder. */
const ELSEWHERE = "the rest of src";

/** One rule: no file under `from` imports (types included) a file under `forbidden`. Paths from the repository root. */
const RULES: Array<{ from: string; forbidden: string; why: string }> = [
  { from: "src/dashboard", forbidden: "src/modules", why: "the browser bundle imports no server module" },
  { from: "src/config", forbidden: "src/modules", why: "config is read before any module exists" },
  { from: "src/http", forbidden: "src/modules", why: "http/ is plumbing the modules use, not the other way round" },
  { from: "src/client", forbidden: "src/cli", why: "the client library does not decide how the CLI exits" },
  { from: "src/proxy", forbidden: "src/modules", why: "the proxy knows addresses and its own interfaces, not the app around it" },
  { from: "src/proxy", forbidden: "src/docker", why: "upstreams reach the proxy as addresses in its route table" },
  { from: "src/proxy", forbidden: "src/config", why: "the edge (src/edge.ts) turns the config into the proxy's settings" },
  { from: "src/proxy", forbidden: "src/context.ts", why: "the proxy is composed, it does not reach for the context" },
  { from: "src/docker", forbidden: "src/modules", why: "docker/ is a side effect behind interfaces the modules use" },
  { from: "src/compose", forbidden: "src/modules", why: "compose/ is pure steps the modules call" },
  { from: "src/modules/apps", forbidden: "src/modules/deploys", why: "deploys use apps; apps never import deploys (no loop)" },
  { from: "src/shared", forbidden: ELSEWHERE, why: "shared wire types are isomorphic: they stand alone" },
  { from: "src", forbidden: "test", why: "nothing in src/ imports test/" },
];

/** Packages the browser bundle may contain (under node_modules/). */
const BROWSER_PACKAGES = ["preact", "uplot", "yaml"];

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

/** Every relative import of a file (type-only ones too), resolved to a path from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    if (!m[1].startsWith(".")) continue;
    const base = resolve(ROOT, dirname(file), m[1]);
    const hit = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((p) => existsSync(p)) ?? base;
    out.push(relative(ROOT, hit));
  }
  return out;
}

const under = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);

function violations(rule: (typeof RULES)[number]): string[] {
  const bad: string[] = [];
  for (const f of new Glob(`${rule.from}/**/*.{ts,tsx}`).scanSync(ROOT)) {
    for (const target of importsOf(f)) {
      const hit =
        rule.forbidden === ELSEWHERE ? under(target, "src") && !under(target, rule.from) : under(target, rule.forbidden);
      if (hit) bad.push(`${f} -> ${target}`);
    }
  }
  return bad;
}

describe("structure", () => {
  it.each(RULES)("nothing in $from imports $forbidden: $why", (rule) => {
    expect(violations(rule)).toEqual([]);
  });

  it("keeps every source file of src/ at 400 lines or fewer (split past 400)", () => {
    const long: string[] = [];
    for (const f of new Glob("src/**/*.{ts,tsx}").scanSync(ROOT)) {
      const lines = readFileSync(join(ROOT, f), "utf8").split("\n").length - 1;
      if (lines > 400) long.push(`${f}: ${lines} lines`);
    }
    expect(long).toEqual([]);
  });

  it("sees the imports it checks (a rule over no imports proves nothing)", () => {
    expect(importsOf("src/dashboard/types.ts")).toContain("src/shared/roles.ts");
    expect(importsOf("src/http/ws.ts")).toContain("src/shared/principal.ts");
    expect(importsOf("src/modules/deploys/lifecycle.ts")).toContain("src/modules/apps/lookup.ts");
    expect(importsOf("src/edge.ts")).toContain("src/docker/replicas.ts");
  });

  it("bundles the dashboard from src/dashboard/, src/shared/ and browser packages only", async () => {
    const result = await Bun.build({ entrypoints: [join(ROOT, "src/dashboard/index.html")], metafile: true } as Bun.BuildConfig);
    expect(result.success).toBe(true);
    const inputs = Object.keys((result as unknown as { metafile: { inputs: Record<string, unknown> } }).metafile.inputs);
    expect(inputs).toContain("src/dashboard/main.tsx");
    // a package is named by the last node_modules/ of its path (a linked node_modules resolves outside the repository)
    const packageOf = (p: string) => (p.includes("node_modules/") ? p.split("node_modules/").at(-1)!.split("/")[0] : null);
    const allowed = (p: string) =>
      under(p, "src/dashboard") || under(p, "src/shared") || BROWSER_PACKAGES.includes(packageOf(p) ?? "");
    expect(inputs.filter((p) => !allowed(p))).toEqual([]);
  });
});
