/**
 * Helpers for tests against the real Docker engine: fail loudly when it is missing (docker tests never skip), make
 * sure the local test images exist, and remove everything a test project left behind, found by label.
 */
import { buildTestImages, TEST_IMAGES } from "../../scripts/test-images";
import { createEngine } from "../../src/docker/engine";
import { EngineTransport, engineTarget } from "../../src/docker/transport";
import type { Engine } from "../../src/docker/types";

export { TEST_IMAGES };

const PROJECT_LABEL = "com.docker.compose.project";

/** Throws a clear error unless the engine answers; call it in beforeAll so every test of the file fails. */
export async function requireDocker(): Promise<Engine> {
  const engine = createEngine();
  if (!(await engine.ping())) {
    throw new Error(
      `docker engine not reachable at ${engineTarget().where}: docker tests need a running dockerd (.ci/run starts one)`,
    );
  }
  return engine;
}

let images: Promise<unknown> | null = null;

/** Build the local test images once per process when they are missing. */
export function ensureTestImages(): Promise<unknown> {
  images ??= buildTestImages({ quiet: true });
  return images;
}

/** A project name unique to this run, so parallel or leftover runs never collide. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}`;
}

/** Remove every container, network and (unless told otherwise) volume labelled with a compose project. */
export async function removeProject(name: string, opts: { volumes?: boolean } = {}): Promise<void> {
  await removeByLabel(`${PROJECT_LABEL}=${name}`, opts);
}

/**
 * Remove containers, networks and volumes carrying a label (`key=value` or `key`). Passes repeat while they find
 * something, so objects a killed compose still had in flight are caught too.
 */
export async function removeByLabel(label: string, opts: { volumes?: boolean } = {}): Promise<void> {
  for (let pass = 0; pass < 3; pass++) if ((await removePass(label, opts.volumes !== false)) === 0) return;
}

async function removePass(label: string, volumes: boolean): Promise<number> {
  const http = new EngineTransport(engineTarget());
  const filters = { label: [label] };
  const containers = await http.json<any[]>("GET", "/containers/json", { query: { all: true, filters } });
  await Promise.all(
    containers.map((c) => http.json("DELETE", `/containers/${c.Id}`, { query: { force: true, v: true } }).catch(() => {})),
  );
  const networks = await http.json<any[]>("GET", "/networks", { query: { filters } });
  await Promise.all(networks.map((n) => http.json("DELETE", `/networks/${n.Id}`).catch(() => {})));
  let found = containers.length + networks.length;
  if (volumes) {
    const list = (await http.json<{ Volumes: any[] | null }>("GET", "/volumes", { query: { filters } })).Volumes ?? [];
    await Promise.all(list.map((v) => http.json("DELETE", `/volumes/${encodeURIComponent(v.Name)}`).catch(() => {})));
    found += list.length;
  }
  return found;
}

/** Remove networks by exact name (every duplicate). */
export async function removeNetwork(name: string): Promise<void> {
  const http = new EngineTransport(engineTarget());
  const list = await http.json<any[]>("GET", "/networks", { query: { filters: { name: [name] } } });
  await Promise.all(list.filter((n) => n.Name === name).map((n) => http.json("DELETE", `/networks/${n.Id}`).catch(() => {})));
}

/** Run the docker CLI; resolves with the exit code, stdout and combined output. */
export async function docker(...args: string[]): Promise<{ code: number; stdout: string; out: string }> {
  const p = Bun.spawn(["docker", ...args], { stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, stdout: out.trim(), out: (out + err).trim() };
}

/** Run the docker CLI and return stdout; throws on a non-zero exit. */
export async function dockerOk(...args: string[]): Promise<string> {
  const r = await docker(...args);
  if (r.code !== 0) throw new Error(`docker ${args.join(" ")} failed (${r.code}): ${r.out}`);
  return r.stdout;
}

/** Await `p`, failing if it has not settled within `ms` (a deadline, not a sleep). */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms}ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
