/** Resident KiB of a process by mapping, from /proc/<pid>/smaps: what scripts/bench/memory*.ts read. */
import { readFileSync } from "node:fs";

/** Sum each mapping's Rss into the group `classify` names from its permissions and path ("" for anonymous). */
export function smapsBy(pid: number, classify: (perms: string, name: string) => string): Record<string, number> {
  const groups: Record<string, number> = {};
  let group = "";
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      group = classify(head[1], head[2]);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) groups[group] = (groups[group] ?? 0) + Number(rss[1]);
  }
  return groups;
}
