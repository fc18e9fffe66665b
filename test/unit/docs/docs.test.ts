/**
 * The docs a newcomer reads say what ships: every configuration key and environment variable is in
 * docs/configuration.md, every command in the README's table, every part of src/ in its Layout, and no page points
 * outside the repository.
 */
import { describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ENV_KEYS } from "../../../src/config/load";
import { defaults } from "../../../src/config/schema";

const ROOT = join(import.meta.dir, "../../..");
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");
const README = read("README.md");
const CONFIG_DOC = read("docs/configuration.md");

/** Dotted keys of the config's leaves (lists and `metrics.tiers` are one key each). */
function leaves(o: Record<string, unknown>, prefix = ""): string[] {
  return Object.entries(o).flatMap(([k, v]) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? leaves(v as Record<string, unknown>, `${prefix}${k}.`)
      : [`${prefix}${k}`],
  );
}

/** The README's section between a heading and the next one. */
const section = (title: string) => {
  const start = README.indexOf(`## ${title}`);
  const end = README.indexOf("\n## ", start + 3);
  return README.slice(start, end === -1 ? undefined : end);
};

describe("docs/configuration.md", () => {
  it("names every configuration key", () => {
    const missing = leaves(defaults() as unknown as Record<string, unknown>).filter((k) => !CONFIG_DOC.includes(`\`${k}\``));
    expect(missing).toEqual([]);
  });

  it("names every environment variable", () => {
    expect(Object.keys(ENV_KEYS).filter((v) => !CONFIG_DOC.includes(`\`${v}\``))).toEqual([]);
  });
});

describe("README.md", () => {
  it("lists every command of the CLI in its command table", () => {
    const main = read("src/main.ts");
    const body = main.slice(main.indexOf("subCommands: {"), main.indexOf("\n  },\n", main.indexOf("subCommands: {")));
    const commands = [...body.matchAll(/^\s+"?([a-z][a-z-]*)"?: \(\) => import/gm)].map((m) => m[1]);
    expect(commands.length).toBeGreaterThan(20);
    const table = section("Command line");
    expect(commands.filter((c) => !table.includes(`\`${c}\``) && !table.includes(`\`sundeck ${c}`))).toEqual([]);
  });

  it("names every folder of src/ and every module in its Layout", () => {
    const layout = section("Layout");
    const dirs = readdirSync(join(ROOT, "src"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `src/${e.name}/`);
    expect(dirs.filter((d) => !layout.includes(d))).toEqual([]);
    const modules = readdirSync(join(ROOT, "src/modules"));
    expect(modules.filter((m) => !new RegExp(`\\b${m}\\b`).test(layout))).toEqual([]);
  });

  it("does not call a shipped part unbuilt", () => {
    const status = README.slice(README.indexOf("> **Status.**"), README.indexOf("## Run it")).replace(/\s+(> )?/g, " ");
    const at = status.indexOf("Not built yet");
    expect(at).toBeGreaterThan(0);
    const notYet = status.slice(at);
    for (const shipped of ["metrics", "alerts", "backups", "git sync"]) expect(notYet).not.toContain(shipped);
  });
});

describe("the docs", () => {
  it("stand on their own: no page points outside the repository", () => {
    const pages = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)];
    const outside = pages.filter((p) => /\.\.\/shared|SPEC\.md|CONTRACT\.md/.test(read(p)));
    expect(outside).toEqual([]);
  });
});
