/**
 * The rendered compose file is accepted by the real compose engines: `config -q` on the rendered output of every ok
 * fixture, with docker-compose v1 (and docker compose v2 when installed). Nothing is started.
 */
import { describe, expect, it } from "bun:test";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { parseAppLabels } from "../../../src/compose/labels";
import { parseCompose } from "../../../src/compose/parse";
import { renderCompose } from "../../../src/compose/rewrite";
import { composeEngines } from "../../helpers/compose-engines";
import { tempDir } from "../../helpers/tmp";
import { type Fixture, loadFixtures } from "./fixtures";

const engines = composeEngines;

/** Render a fixture into its own temp project directory, with its sibling files; returns the rendered file's path. */
function renderFixture(f: Fixture): string {
  const dir = tempDir("sundeck-rewritecheck-");
  if (f.filesDir) cpSync(f.filesDir, dir, { recursive: true });
  const project = parseCompose(f.text, f.env);
  const routed = [...new Set(parseAppLabels(project).endpoints.map((e) => e.service))];
  const file = join(dir, "rendered.yml");
  writeFileSync(file, renderCompose(project, { routed, publicNetwork: "sundeck-public" }));
  return file;
}

function compose(cmd: string[], file: string, args: string[]) {
  // a clean environment: the rendered file must not depend on the caller's variables
  const r = Bun.spawnSync([...cmd, "-p", "sundeck-rewritecheck", "-f", file, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DOCKER_HOST: process.env.DOCKER_HOST ?? "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

const fixtures = loadFixtures("ok");

// without an engine the loop below registers nothing, so this is what fails (everywhere, not only in CI)
it("finds a compose engine on this machine", () => {
  expect(
    engines.map((e) => e.name),
    "no compose engine: install docker-compose (v1) or docker compose (v2)",
  ).not.toEqual([]);
});

for (const engine of engines) {
  describe(`rendered files accepted by ${engine.name}`, () => {
    const usable = fixtures.filter((f) => engine.v2 || !f.v2Only);

    it.each(usable.map((f) => [f.name, f] as const))("accepts the rendered %s", (_name, f) => {
      const r = compose(engine.cmd, renderFixture(f), ["config", "-q"]);
      // v1 may warn on stderr (swarm-only keys such as configs) but must not refuse the file
      expect(r.code, r.err).toBe(0);
    });

    it("binds every published port of the every-syntax fixture to the interface we rendered", () => {
      const f = fixtures.find((x) => x.name === "ports-every-syntax")!;
      const r = compose(engine.cmd, renderFixture(f), ["config"]);
      expect(r.code).toBe(0);
      const services = parse(r.out).services;
      const ports = [...services.web.ports, ...services.api.ports].map((p: any) =>
        typeof p === "string" ? p : `${p.host_ip ?? ""}|${p.published ?? ""}|${p.target}`,
      );
      expect(ports.length).toBeGreaterThan(0);
      for (const p of ports) expect(p).toMatch(/^(127\.0\.0\.1|0\.0\.0\.0|\[?::1\]?)[:|]/);
      expect(ports.some((p: string) => p.startsWith("0.0.0.0"))).toBe(true);
    });

    it("keeps escaped dollars literal after compose reads the file", () => {
      const f = fixtures.find((x) => x.name === "routed-web-db")!;
      const r = compose(engine.cmd, renderFixture(f), ["config"]);
      expect(r.code).toBe(0);
      const env = parse(r.out).services.web.environment;
      // compose prints a literal $ escaped again as $$
      expect(env.PRICE).toBe("$$5");
      expect(env.DATABASE_URL).toBe("postgres://shop:s3cret$$x@db:5432/shop");
    });
  });
}
