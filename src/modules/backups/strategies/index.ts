/**
 * The backup strategies by id (postgres, mysql, redis, sqlite, volume), detection, and the container view strategies
 * work on. `needsStop` says which restores the caller must run with the service stopped.
 */
import { mkdirSync } from "node:fs";
import type { BackupStrategy } from "../../../shared/backups";
import type { BackupContainer } from "../types";
import { mysqlStrategy } from "./mysql";
import { postgresStrategy } from "./postgres";
import { redisStrategy } from "./redis";
import type { AppStrategy, StrategyDeps } from "./run";
import { sqliteStrategy } from "./sqlite";
import { volumeStrategy } from "./volume";

export { detectStrategies, factsFromCompose, factsFromContainers, type ServiceFacts, STRATEGY_LABEL } from "./detect";
export { type AppStrategy, PATH_LABEL, type StrategyDeps, StrategyError } from "./run";

/** Every strategy, by id. */
export function createStrategies(deps: StrategyDeps): Record<BackupStrategy, AppStrategy> {
  // redis and sqlite restores spool under tmpDir (`spool` makes its own directory in it): a fresh data dir has none
  if (deps.tmpDir) mkdirSync(deps.tmpDir, { recursive: true, mode: 0o700 });
  return {
    postgres: postgresStrategy(deps),
    mysql: mysqlStrategy(deps),
    redis: redisStrategy(deps),
    sqlite: sqliteStrategy(deps),
    volume: volumeStrategy(deps),
  };
}

/** The container a strategy works on, from the engine's `GET /containers/{id}/json`. */
export function backupContainer(info: any): BackupContainer {
  const labels = info?.Config?.Labels ?? {};
  return {
    id: String(info?.Id ?? ""),
    name: String(info?.Name ?? "").replace(/^\//, ""),
    service: labels["com.docker.compose.service"] ?? String(info?.Name ?? "").replace(/^\//, ""),
    image: String(info?.Config?.Image ?? ""),
    env: info?.Config?.Env ?? [],
    mounts: (info?.Mounts ?? [])
      .filter((m: any) => m.Type === "volume" || m.Type === "bind")
      .map((m: any) => ({
        type: m.Type,
        ...(m.Name ? { name: m.Name } : {}),
        source: String(m.Source ?? ""),
        destination: String(m.Destination ?? ""),
      })),
  };
}
