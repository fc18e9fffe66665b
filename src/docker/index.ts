/**
 * Detecting the Docker layer at start: the engine on its socket and `docker compose` (v2) or `docker-compose` (v1).
 * A missing part is logged with what to do, and the server runs on without it (Docker routes answer 503).
 */
import type { Log } from "../log/logger";
import { detectCompose } from "./compose";
import { createEngine } from "./engine";
import { createRunner } from "./runner";
import type { DockerHandle, Engine } from "./types";

/** Fill `handle` with what this machine has. */
export async function initDocker(
  handle: DockerHandle,
  log: Log,
  opts: { socketPath?: string; engine?: Engine } = {},
): Promise<void> {
  const engine = opts.engine ?? createEngine({ socketPath: opts.socketPath });
  const problems: string[] = [];
  if (await engine.ping().catch(() => false)) {
    handle.engine = engine;
    const v = await engine.version().catch(() => null);
    log.info("docker engine found", { version: v?.version ?? "?", api: v?.apiVersion ?? "?" });
  } else {
    problems.push("the docker engine is not reachable (is dockerd running, and may sundeck use its socket?)");
  }
  const compose = await detectCompose(createRunner(log)).catch(() => null);
  if (compose) {
    handle.compose = compose;
    log.info("docker compose found", { flavor: compose.flavor, version: compose.version });
  } else {
    problems.push("neither `docker compose` (v2) nor `docker-compose` (v1) is installed");
  }
  handle.problem = problems.length ? `docker unavailable: ${problems.join("; ")}` : null;
  if (handle.problem) log.error(`${handle.problem}; apps cannot be deployed until this is fixed`);
}
