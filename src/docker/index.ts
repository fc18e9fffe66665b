/**
 * The Docker layer of the server: the engine on its socket and `docker compose` (v2) or `docker-compose` (v1),
 * detected once at start. A missing part is logged with what to do, and the server runs on without it (Docker
 * routes answer 503 naming the reason); work that arrives while detection runs waits for it.
 *
 * Compose's answer is kept in the data dir keyed by the identity of the binaries it came from (detect-cache.ts): a
 * start with the same binaries takes it without spawning anything, then asks compose again in the background.
 */
import type { Log } from "../log/logger";
import { createComposeDriver, detectCompose } from "./compose";
import { binaryIdentity, type Detected, readDetected, writeDetected } from "./detect-cache";
import { createEngine } from "./engine";
import { createRunner } from "./runner";
import type { CommandRunner, DockerHandle, Engine } from "./types";

/** After a start from the kept answer, compose is asked again this much later, off the path to ready. */
const RECHECK_AFTER_MS = 10_000;

/** The Docker layer: what was found, and when detection is over. */
export interface DockerLayer extends DockerHandle {
  /** Detect the engine and compose (once; later calls return the same promise). */
  detect(): Promise<void>;
  /** Resolves when detection is over, or at once when it never started (CLI commands do not detect). */
  settled(): Promise<void>;
  /** Ask compose again now and take its answer (what the background re-check after a start from the kept one runs). */
  recheck(): Promise<void>;
  /** Cancel a pending background re-check. */
  stop(): void;
}

export interface DockerLayerOptions {
  socketPath?: string;
  engine?: Engine;
  /** Where compose's answer is kept (the data dir); without it compose is spawned at every start. */
  cacheDir?: string;
  /** Runs compose (default: Bun.spawn). */
  runner?: CommandRunner;
  /** The environment compose is found and run with (default: the server's). */
  env?: Record<string, string | undefined>;
}

/** A layer with nothing detected yet. */
export function createDockerLayer(log: Log, opts: DockerLayerOptions = {}): DockerLayer {
  const env = opts.env ?? process.env;
  const runner = opts.runner ?? createRunner(log);
  let detecting: Promise<void> | null = null;
  let engineProblem: string | null = null;
  let recheckTimer: ReturnType<typeof setTimeout> | undefined;

  const probe = async (): Promise<Detected> => {
    const d = await detectCompose(runner, env).catch(() => null);
    return d ? { flavor: d.flavor, version: d.version } : null;
  };
  const keep = (key: string, found: Detected) => {
    if (!opts.cacheDir) return;
    try {
      writeDetected(opts.cacheDir, key, found);
    } catch (e) {
      log.warn("cannot keep the compose detection result", { error: (e as Error).message });
    }
  };
  const take = (found: Detected) => {
    layer.compose = found ? createComposeDriver(runner, found.flavor, found.version, { env }) : null;
    const problems = [
      ...(engineProblem ? [engineProblem] : []),
      ...(found ? [] : ["neither `docker compose` (v2) nor `docker-compose` (v1) is installed"]),
    ];
    layer.problem = problems.length ? `docker unavailable: ${problems.join("; ")}` : null;
  };

  const detectInto = async (): Promise<void> => {
    const engine = opts.engine ?? createEngine({ socketPath: opts.socketPath });
    const key = opts.cacheDir ? binaryIdentity(env) : null;
    const kept = key ? readDetected(opts.cacheDir!, key) : undefined;
    // the engine ping and the compose probe (a spawned process, unless its answer is kept) do not depend on each other
    const [pong, found] = await Promise.all([engine.ping().catch(() => false), kept !== undefined ? kept : probe()]);
    if (pong) {
      layer.engine = engine;
      // only logged: not worth a round trip before the server is ready
      void engine
        .version()
        .catch(() => null)
        .then((v) => log.info("docker engine found", { version: v?.version ?? "?", api: v?.apiVersion ?? "?" }));
    } else {
      engineProblem = "the docker engine is not reachable (is dockerd running, and may sundeck use its socket?)";
    }
    take(found);
    if (found) log.info("docker compose found", { flavor: found.flavor, version: found.version, kept: kept !== undefined });
    if (layer.problem) log.error(`${layer.problem}; apps cannot be deployed until this is fixed`);
    if (key && kept === undefined) keep(key, found);
    if (kept !== undefined) {
      // the kept answer names the same binaries; compose is still asked once, in case what they run changed
      recheckTimer = setTimeout(() => void layer.recheck(), RECHECK_AFTER_MS);
      recheckTimer.unref?.();
    }
  };

  const layer: DockerLayer = {
    engine: null,
    compose: null,
    problem: "docker not detected yet",
    detect: () => (detecting ??= detectInto()),
    settled: () => detecting ?? Promise.resolve(),
    async recheck() {
      const key = opts.cacheDir ? binaryIdentity(env) : null;
      const found = await probe();
      const had = layer.compose ? { flavor: layer.compose.flavor, version: layer.compose.version } : null;
      if (JSON.stringify(found) !== JSON.stringify(had)) {
        log.warn("docker compose changed since its answer was kept", { was: had ?? "none", now: found ?? "none" });
        take(found);
      }
      if (key) keep(key, found);
    },
    stop: () => clearTimeout(recheckTimer),
  };
  return layer;
}
