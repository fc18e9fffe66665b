/** The compose engines installed on this machine: docker-compose v1 always in CI, docker compose v2 when present. */

function works(cmd: string[]): boolean {
  try {
    return Bun.spawnSync(cmd, { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  } catch {
    return false;
  }
}

/** Each engine that answers `version`, with the command that runs it. */
export const composeEngines = [
  { name: "docker-compose v1", cmd: ["docker-compose"], v2: false },
  { name: "docker compose v2", cmd: ["docker", "compose"], v2: true },
].filter((e) => works([...e.cmd, "version"]));
