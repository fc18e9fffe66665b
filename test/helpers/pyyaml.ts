/**
 * PyYAML from Bun: how compose v1 (docker-compose 1.29, YAML 1.1 through PyYAML's SafeLoader) reads a YAML text. One
 * python process reads a whole batch (pyyaml-read.py); values JSON cannot carry come back tagged (see that script).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

const SCRIPT = join(import.meta.dir, "pyyaml-read.py");

/** What PyYAML made of one document: its value (tagged where JSON cannot carry it), or the error it raised. */
export type PyRead = { ok: unknown; retry: boolean } | { error: string };

let found: string | null | undefined;

/** A python3 that can `import yaml`: Debian's /usr/bin/python3 (python3-yaml, what docker-compose uses) first. */
export function pythonWithYaml(): string | null {
  if (found !== undefined) return found;
  found = null;
  for (const py of ["/usr/bin/python3", "python3"]) {
    if (py.startsWith("/") && !existsSync(py)) continue;
    try {
      const r = Bun.spawnSync([py, "-c", "import yaml"], { stdout: "ignore", stderr: "ignore" });
      if (r.exitCode === 0) {
        found = py;
        break;
      }
    } catch {
      // not installed
    }
  }
  return found;
}

/** Read every text with PyYAML in one python process; results in the same order. */
export async function readWithPyYAML(texts: string[]): Promise<PyRead[]> {
  if (texts.length === 0) return [];
  const py = pythonWithYaml();
  if (!py) throw new Error("no python3 with PyYAML (install python3-yaml)");
  const proc = Bun.spawn([py, SCRIPT], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  // read while writing: a full stdout pipe would otherwise stop python from reading its stdin
  const out = new Response(proc.stdout).text();
  const err = new Response(proc.stderr).text();
  for (const t of texts) proc.stdin.write(`${Buffer.from(t, "utf8").toString("base64")}\n`);
  await proc.stdin.end();
  const code = await proc.exited;
  const lines = (await out).split("\n").filter((l) => l !== "");
  if (code !== 0 || lines.length !== texts.length) {
    throw new Error(`pyyaml-read.py exited ${code} with ${lines.length}/${texts.length} answers: ${(await err).slice(0, 2000)}`);
  }
  return lines.map((l) => JSON.parse(l) as PyRead);
}
