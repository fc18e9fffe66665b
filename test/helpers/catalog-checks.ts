/** Checks the template and snippet catalogs share: pinned images with healthchecks, and docker-compose v1's verdict. */
import { expect } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Every service of a parsed compose document pins its image to a tag that is not latest and has a healthcheck. */
export function expectPinnedAndChecked(services: Record<string, any>) {
  for (const [name, svc] of Object.entries(services)) {
    const image = String(svc.image ?? "");
    const tag = /:([^/:@]+)$/.exec(image)?.[1];
    expect({ service: name, image, pinned: !!tag && tag !== "latest" }).toEqual({ service: name, image, pinned: true });
    expect({ service: name, healthcheck: Array.isArray(svc.healthcheck?.test) }).toEqual({ service: name, healthcheck: true });
  }
}

/** `docker-compose config -q` (v1) on `text` written to `dir` (with an optional .env): its exit code and stderr. */
export function composeV1(dir: string, text: string, env?: string): { code: number; err: string } {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "docker-compose.yml"), text);
  if (env !== undefined) writeFileSync(join(dir, ".env"), env);
  const r = Bun.spawnSync(["docker-compose", "-p", "sundeck-catalog", "-f", join(dir, "docker-compose.yml"), "config", "-q"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  });
  return { code: r.exitCode ?? -1, err: r.stderr.toString().trim() };
}

/** A compose text reads exactly the variables declared (`${KEY}`), and nothing that looks like a password is literal. */
export function expectOnlyDeclaredVariables(compose: string, variables: ReadonlyArray<{ key: string }>) {
  const used = new Set([...compose.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
  expect([...used].sort()).toEqual(variables.map((v) => v.key).sort());
  expect(compose).not.toMatch(/(PASSWORD|SECRET|TOKEN|_KEY)[A-Z_]*:\s*(?!\$\{)\S/);
}
