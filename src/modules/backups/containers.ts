/**
 * The containers a backup works on: an app service's running container found through the Engine API by its compose
 * labels, hooks run in it (Engine API exec), and the stop and start around a restore that needs the data at rest
 * (Engine API too: a stop waits the container's own stop grace period, compose's `stop_grace_period`).
 */

import { projectName } from "../../docker/naming";
import type { CommandRunner, DockerHandle } from "../../docker/types";
import { HttpError } from "../../lib/errors";
import type { BackupContainer } from "./types";

/** What the runner and the restorer need of Docker. */
export interface ServiceContainers {
  /**
   * The running container of an app service (the first replica), or an error naming what is missing. With
   * `stopped`, a stopped one will do when none runs (a restore that needs the service stopped anyway).
   */
  find(slug: string, service: string, o?: { stopped?: boolean }): Promise<BackupContainer>;
  /** The running containers of an app service (every replica). */
  running?(slug: string, service: string): Promise<BackupContainer[]>;
  /** One container of every service of the app (a running replica first, else the first), inspected. */
  perService?(slug: string): Promise<BackupContainer[]>;
  /** A container of the app by name (upload-restore's `container`), running or not. */
  byName(slug: string, name: string): Promise<BackupContainer>;
  /** Run `sh -c cmd` in the container: exit code and the tail of its output. */
  exec(c: BackupContainer, cmd: string, signal?: AbortSignal): Promise<{ code: number; output: string }>;
  /** Stop the container (its own stop grace period, then killed); already stopped is fine. */
  stop(c: BackupContainer): Promise<void>;
  /** Start the container; already running is fine. `c.id` may be a name (recovery of rows before ids were kept). */
  start(c: BackupContainer): Promise<void>;
}

/** Docker is not there: the routes answer 503 naming why. */
const down = (d: DockerHandle) => new HttpError(503, d.problem ?? "docker is not available");

/** The engine's container JSON reduced to what strategies need. */
export function toBackupContainer(info: any): BackupContainer {
  const labels: Record<string, string> = info?.Config?.Labels ?? {};
  return {
    id: String(info.Id),
    name: String(info.Name ?? "").replace(/^\//, ""),
    service: labels["com.docker.compose.service"] ?? "",
    image: String(info?.Config?.Image ?? ""),
    env: Array.isArray(info?.Config?.Env) ? info.Config.Env.map(String) : [],
    mounts: (info?.Mounts ?? [])
      .filter((m: any) => m.Type === "volume" || m.Type === "bind")
      .map((m: any) => ({
        type: m.Type,
        ...(m.Name ? { name: String(m.Name) } : {}),
        source: String(m.Source ?? ""),
        destination: String(m.Destination ?? ""),
      })),
  };
}

/**
 * Build the Docker side of backups over the detected layer. `_runner` is no longer used (stop and start went to the
 * Engine API); it stays so callers need not change at once.
 */
export function createServiceContainers(docker: DockerHandle, _runner?: CommandRunner): ServiceContainers {
  const engine = () => {
    if (!docker.engine) throw down(docker);
    return docker.engine;
  };
  const must = async (what: string, call: () => Promise<void>) => {
    try {
      await call();
    } catch (e) {
      throw new Error(`${what} failed: ${(e as Error).message}`);
    }
  };
  return {
    async find(slug, service, o = {}) {
      const e = engine();
      const list = (await e.containers({ project: projectName(slug) }))
        .filter((c) => c.service === service)
        .sort((a, b) => (a.number ?? 0) - (b.number ?? 0));
      const pick = list.find((c) => c.state === "running") ?? (o.stopped ? list[0] : undefined);
      if (!pick) throw new Error(`no running container of service ${service}`);
      return toBackupContainer(await e.inspect(pick.id));
    },
    async running(slug, service) {
      const e = engine();
      const list = await e.containers({ project: projectName(slug) });
      const ids = list.filter((c) => c.service === service && c.state === "running").map((c) => c.id);
      return Promise.all(ids.map(async (id) => toBackupContainer(await e.inspect(id))));
    },
    async perService(slug) {
      const e = engine();
      const list = (await e.containers({ project: projectName(slug) })).sort((a, b) => (a.number ?? 0) - (b.number ?? 0));
      const pick = new Map<string, (typeof list)[number]>();
      for (const c of list) {
        if (!c.service) continue;
        const had = pick.get(c.service);
        if (!had || (had.state !== "running" && c.state === "running")) pick.set(c.service, c);
      }
      return Promise.all([...pick.values()].map(async (c) => toBackupContainer(await e.inspect(c.id))));
    },
    async byName(slug, name) {
      const e = engine();
      const list = await e.containers({ project: projectName(slug) });
      const c = list.find((x) => x.name === name || x.id.startsWith(name));
      if (!c || name.length < 1) throw new HttpError(400, `container: no container ${name} in app ${slug}`);
      return toBackupContainer(await e.inspect(c.id));
    },
    async exec(c, cmd, signal) {
      const p = await engine().exec(c.id, { cmd: ["sh", "-c", cmd], signal, stderrCap: 4096 });
      // stdout is read to its end (and its tail kept) so the command is not blocked on a full pipe
      let tail = "";
      const dec = new TextDecoder();
      for await (const chunk of p.stdout as unknown as AsyncIterable<Uint8Array>)
        tail = (tail + dec.decode(chunk, { stream: true })).slice(-2000);
      const r = await p.result;
      return { code: r.exitCode, output: `${tail}\n${r.stderr}`.trim().slice(-2000) };
    },
    stop: (c) => must(`stopping ${c.name}`, () => engine().stop(c.id)),
    start: (c) => must(`starting ${c.name}`, () => engine().start(c.id)),
  };
}
