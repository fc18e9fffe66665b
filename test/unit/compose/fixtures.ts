/** The compose fixture corpus (test/fixtures/compose): files, their `.env`, sibling files and `# expect:` lines. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseEnvFile } from "../../../src/compose/envfile";
import type { SafetyPolicy } from "../../../src/compose/model";

/** Root of the compose fixtures. */
export const FIXTURES = join(import.meta.dir, "../../fixtures/compose");

/** The app the corpus is checked as: `myapp` under the default apps dir, with the default data dir. */
export const POLICY: SafetyPolicy = {
  appDir: "/etc/sundeck/apps/myapp",
  appsDir: "/etc/sundeck/apps",
  dataDir: "/var/lib/sundeck",
};

/** One fixture file and what comes with it. */
export interface Fixture {
  name: string;
  text: string;
  /** From `<name>.env`, else empty. */
  env: Record<string, string>;
  /** The text of `<name>.env`, else "". */
  envText: string;
  /** From `# expect: <rule> <service|->`. */
  expect: { rule: string; service: string | null } | null;
  /** `# compose: v2` marks files using features docker-compose v1 does not know. */
  v2Only: boolean;
  /** `<name>.files/`: files that live next to the compose file in the app directory. */
  filesDir: string | null;
  /** The safety policy to check it with: POLICY, plus `# allowed-host-paths: /a /b` when the file has that line. */
  policy: SafetyPolicy;
}

/** Every `*.yml` fixture of a corpus (`security` or `ok`), sorted by name. */
export function loadFixtures(kind: "security" | "ok"): Fixture[] {
  const dir = join(FIXTURES, kind);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yml"))
    .sort()
    .map((file) => {
      const name = file.slice(0, -4);
      const text = readFileSync(join(dir, file), "utf8");
      const envPath = join(dir, `${name}.env`);
      const envText = existsSync(envPath) ? readFileSync(envPath, "utf8") : "";
      const filesDir = join(dir, `${name}.files`);
      const m = /^# expect: (\S+) (\S+)$/m.exec(text);
      const allowed = /^# allowed-host-paths: (.+)$/m.exec(text)?.[1].trim().split(/\s+/);
      return {
        name,
        text,
        env: parseEnvFile(envText),
        envText,
        expect: m ? { rule: m[1], service: m[2] === "-" ? null : m[2] } : null,
        v2Only: /^# compose: v2$/m.test(text),
        filesDir: existsSync(filesDir) ? filesDir : null,
        policy: allowed ? { ...POLICY, allowedHostPaths: allowed } : POLICY,
      };
    });
}

/** A readFile for checkSafety that serves the fixture's sibling files as if they were in POLICY.appDir. */
export function fixtureReader(f: Fixture): (absPath: string) => string | null {
  return (absPath) => {
    if (!f.filesDir) return null;
    const rel = relative(POLICY.appDir, absPath);
    if (rel.startsWith("..")) return null;
    const p = join(f.filesDir, rel);
    return existsSync(p) ? readFileSync(p, "utf8") : null;
  };
}
