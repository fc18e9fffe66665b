/** Cleanup shared by the benchmarks: whatever a compose project left in Docker, found by its label. */

/** Containers, networks and volumes of compose project `project` (what DELETE missed, or an interrupted run left). */
export function removeProject(project: string): void {
  const label = `label=com.docker.compose.project=${project}`;
  const lists: Array<[string[], string[]]> = [
    [
      ["ps", "-aq"],
      ["rm", "-f"],
    ],
    [
      ["network", "ls", "-q"],
      ["network", "rm"],
    ],
    [
      ["volume", "ls", "-q"],
      ["volume", "rm", "-f"],
    ],
  ];
  for (const [list, rm] of lists) {
    const ids = Bun.spawnSync(["docker", ...list, "--filter", label])
      .stdout.toString()
      .trim();
    if (ids) Bun.spawnSync(["docker", ...rm, ...ids.split("\n")], { stdout: "ignore", stderr: "ignore" });
  }
}
