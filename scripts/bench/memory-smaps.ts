/** Resident memory of a process from /proc (smaps, smaps_rollup): what scripts/bench/memory*.ts read. */
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

/** RSS and its anonymous and file-backed parts, in MiB, from /proc/<pid>/smaps_rollup. */
export function rollupMiB(pid: number): { rss: number; anon: number; file: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
  const rss = kb("Rss");
  const anon = kb("Anonymous");
  return { rss: rss / 1024, anon: anon / 1024, file: (rss - anon) / 1024 };
}
