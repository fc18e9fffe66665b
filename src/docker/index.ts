/**
 * The Docker layer of the server: the engine on its socket and `docker compose` (v2) or `docker-compose` (v1),
 * detected once at start. A missing part is logged with what to do, and the server runs on without it (Docker
 * routes answer 503 naming the reason); work that arrives while detection runs waits for it.
 */
import type { Log } from "../log/logger";
import { detectCompose } from "./compose";
import { createEngine } from "./engine";
import { createRunner } from "./runner";
import type { DockerHandle, Engine } from "./types";

/** The Docker layer: what was found, and when detection is over. */
export interface DockerLayer extends DockerHandle {
  /** Detect the engine and compose (once; later calls return the same promise). */
  detect(): Promise<void>;
  /** Resolves when detection is over, or at once when it never started (CLI commands do not detect). */
  settled(): Promise<void>;
}

/** A layer with nothing detected yet. */
export function createDockerLayer(log: Log, opts: { socketPath?: string; engine?: Engine } = {}): DockerLayer {
  let detecting: Promise<void> | null = null;
  const layer: DockerLayer = {
    engine: null,
    compose: null,
    problem: "docker not detected yet",
    detect: () => (detecting ??= detectInto(layer, log, opts)),
    settled: () => detecting ?? Promise.resolve(),
  };
  return layer;
}

async function detectInto(handle: DockerHandle, log: Log, opts: { socketPath?: string; engine?: Engine }): Promise<void> {
  const engine = opts.engine ?? createEngine({ socketPath: opts.socketPath });
  const problems: string[] = [];
  // the engine ping and the compose probe (a spawned process) do not depend on each other
  const [pong, compose] = await Promise.all([
    engine.ping().catch(() => false),
    detectCompose(createRunner(log)).catch(() => null),
  ]);
  if (pong) {
    handle.engine = engine;
    const v = await engine.version().catch(() => null);
    log.info("docker engine found", { version: v?.version ?? "?", api: v?.apiVersion ?? "?" });
  } else {
    problems.push("the docker engine is not reachable (is dockerd running, and may sundeck use its socket?)");
  }
  if (compose) {
    handle.compose = compose;
    log.info("docker compose found", { flavor: compose.flavor, version: compose.version });
  } else {
    problems.push("neither `docker compose` (v2) nor `docker-compose` (v1) is installed");
  }
  handle.problem = problems.length ? `docker unavailable: ${problems.join("; ")}` : null;
  if (handle.problem) log.error(`${handle.problem}; apps cannot be deployed until this is fixed`);
}
