/**
 * Taking a compose project down by its labels, through the Engine API: what `compose down` does, without reading a
 * compose file. Removal uses it so that an app whose file no longer parses or passes the checks can always go.
 */
import type { Engine } from "./types";

const PROJECT_LABEL = "com.docker.compose.project";

/** What a sweep removed, and what it could not (each a line naming the object and the engine's reason). */
export interface SweepResult {
  containers: number;
  networks: number;
  volumes: number;
  errors: string[];
}

/**
 * Stop and remove every container of the project, then its networks, then (when asked) its volumes: only objects that
 * carry the project's compose label, so external volumes and networks shared with other projects are never touched.
 */
export async function sweepProject(
  engine: Engine,
  project: string,
  o: { volumes?: boolean; onLine?: (text: string) => void; signal?: AbortSignal } = {},
): Promise<SweepResult> {
  // compose lower-cases project names in the labels it writes
  const name = project.toLowerCase();
  const label = `${PROJECT_LABEL}=${name}`;
  const out: SweepResult = { containers: 0, networks: 0, volumes: 0, errors: [] };
  const attempt = async (what: string, f: () => Promise<void>): Promise<boolean> => {
    try {
      await f();
      return true;
    } catch (e) {
      out.errors.push(`${what}: ${(e as Error).message}`);
      return false;
    }
  };
  for (const c of await engine.containers({ project: name })) {
    if (o.signal?.aborted) return out;
    const what = c.name || c.id.slice(0, 12);
    // a graceful stop first, as compose down does (the container's own stop timeout), then the removal
    const ok = await attempt(`container ${what}`, async () => {
      if (c.state === "running" || c.state === "restarting" || c.state === "paused") await engine.stop(c.id);
      await engine.removeContainer(c.id, { force: true, volumes: o.volumes });
    });
    if (ok) {
      out.containers++;
      o.onLine?.(`removed container ${what}`);
    }
  }
  for (const n of await engine.networks({ labels: [label] })) {
    if (await attempt(`network ${n.name}`, () => engine.removeNetwork(n.id))) {
      out.networks++;
      o.onLine?.(`removed network ${n.name}`);
    }
  }
  if (o.volumes) {
    for (const v of await engine.volumes({ labels: [label] })) {
      if (await attempt(`volume ${v.name}`, () => engine.removeVolume(v.name))) {
        out.volumes++;
        o.onLine?.(`removed volume ${v.name}`);
      }
    }
  }
  return out;
}
