/**
 * A container's counters from its cgroup files, the cheapest source there is: cgroup v2 (cpu.stat, memory.current,
 * io.stat) and v1 (cpuacct, memory, blkio controllers), with the cgroupfs driver (`docker/<id>`), the systemd driver
 * (`system.slice/docker-<id>.scope`) or whatever /proc/<pid>/cgroup names. Where the files are is found once per
 * container; reading them afterwards is a handful of small reads.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readText } from "./procfs";

/** Where one container's cgroup files are. */
export type CgroupLayout = { version: 2; dir: string } | { version: 1; cpuacct: string; memory: string; blkio: string | null };

/** Cumulative counters of a container read at one moment; a part the source could not give is null. */
export interface Counters {
  /** CPU time used, ns. */
  cpuNs: number | null;
  /** Memory in use the way `docker stats` counts it (usage less inactive file cache). */
  memBytes: number | null;
  netRx: number | null;
  netTx: number | null;
  blkRead: number | null;
  blkWrite: number | null;
}

/** The cgroup paths a container's init process is in, from /proc/<pid>/cgroup: controller list → path. */
export function parseProcCgroup(text: string): Array<{ controllers: string[]; path: string }> {
  const out: Array<{ controllers: string[]; path: string }> = [];
  for (const line of text.split("\n")) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (m) out.push({ controllers: m[1] ? m[1].split(",") : [], path: m[2] });
  }
  return out;
}

/**
 * Find the container's cgroup under `root` (normally /sys/fs/cgroup), or null when none is readable. `procCgroup`
 * is the text of /proc/<pid>/cgroup when known: it names the exact group (custom cgroup parents included); the two
 * paths Docker's drivers use are tried after it.
 */
export function findCgroup(root: string, id: string, procCgroup: string | null = null): CgroupLayout | null {
  const lines = procCgroup ? parseProcCgroup(procCgroup) : [];
  const defaults = [`docker/${id}`, `system.slice/docker-${id}.scope`];

  // v2: one unified tree; a group is ours when it has both the cpu and the memory files
  const unified = lines.find((l) => l.controllers.length === 0)?.path;
  for (const g of [...(unified ? [unified] : []), ...defaults]) {
    const dir = join(root, g);
    if (existsSync(join(dir, "memory.current")) && existsSync(join(dir, "cpu.stat"))) return { version: 2, dir };
  }

  // v1: one tree per controller; the mount is named after the controller or after its co-mounted list (cpu,cpuacct),
  // which distributions usually but not always link to the single names
  const v1 = (controller: string, file: string): string | null => {
    const own = lines.find((l) => l.controllers.includes(controller));
    const mounts = [controller, ...(own && own.controllers.length > 1 ? [own.controllers.join(",")] : [])];
    if (controller === "cpuacct") mounts.push("cpu,cpuacct", "cpuacct,cpu");
    for (const g of [...(own ? [own.path] : []), ...defaults]) {
      for (const m of mounts) {
        const dir = join(root, m, g);
        if (existsSync(join(dir, file))) return dir;
      }
    }
    return null;
  };
  const cpuacct = v1("cpuacct", "cpuacct.usage");
  const memory = v1("memory", "memory.usage_in_bytes");
  if (!cpuacct || !memory) return null;
  return { version: 1, cpuacct, memory, blkio: v1("blkio", "blkio.throttle.io_service_bytes") };
}

/** The counters in a layout's files (network is not in the cgroup: see /proc/<pid>/net/dev). Null when CPU is gone. */
export function readCgroup(l: CgroupLayout): Omit<Counters, "netRx" | "netTx"> | null {
  return l.version === 2 ? readV2(l.dir) : readV1(l);
}

function readV2(dir: string): Omit<Counters, "netRx" | "netTx"> | null {
  const cpu = readText(join(dir, "cpu.stat"));
  const usec = cpu === null ? null : keyed(cpu).get("usage_usec");
  if (usec === undefined || usec === null) return null;
  const current = num(readText(join(dir, "memory.current")));
  const stat = readText(join(dir, "memory.stat"));
  const io = readText(join(dir, "io.stat"));
  const blk = io === null ? null : parseIoStat(io);
  return {
    cpuNs: usec * 1000,
    memBytes: current === null ? null : memoryInUse(current, stat === null ? new Map() : keyed(stat), 2),
    blkRead: blk?.read ?? null,
    blkWrite: blk?.write ?? null,
  };
}

function readV1(l: Extract<CgroupLayout, { version: 1 }>): Omit<Counters, "netRx" | "netTx"> | null {
  const cpuNs = num(readText(join(l.cpuacct, "cpuacct.usage")));
  if (cpuNs === null) return null;
  const usage = num(readText(join(l.memory, "memory.usage_in_bytes")));
  const stat = readText(join(l.memory, "memory.stat"));
  let blk: { read: number; write: number } | null = null;
  if (l.blkio) {
    // the recursive file includes child groups; older kernels only have the flat one
    const text =
      readText(join(l.blkio, "blkio.throttle.io_service_bytes_recursive")) ??
      readText(join(l.blkio, "blkio.throttle.io_service_bytes"));
    blk = text === null ? null : parseBlkio(text);
  }
  return {
    cpuNs,
    memBytes: usage === null ? null : memoryInUse(usage, stat === null ? new Map() : keyed(stat), 1),
    blkRead: blk?.read ?? null,
    blkWrite: blk?.write ?? null,
  };
}

/**
 * Memory in use as `docker stats` computes it: usage less the inactive file cache (total_inactive_file on v1,
 * inactive_file on v2), when that is smaller than the usage.
 */
export function memoryInUse(usage: number, stat: Map<string, number>, version: 1 | 2): number {
  const inactive = version === 1 ? stat.get("total_inactive_file") : stat.get("inactive_file");
  return inactive !== undefined && inactive < usage ? usage - inactive : usage;
}

/** `key value` lines (cpu.stat, memory.stat) as a map. */
export function keyed(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^\d+$/.test(v)) out.set(k, Number(v));
  }
  return out;
}

/** v2 io.stat: `MAJ:MIN rbytes=N wbytes=N rios=N ...` per device, summed. */
export function parseIoStat(text: string): { read: number; write: number } {
  let read = 0;
  let write = 0;
  for (const m of text.matchAll(/\b(rbytes|wbytes)=(\d+)/g)) {
    if (m[1] === "rbytes") read += Number(m[2]);
    else write += Number(m[2]);
  }
  return { read, write };
}

/** v1 blkio: `MAJ:MIN Read N` / `MAJ:MIN Write N` per device, summed (the `Total` lines are left out). */
export function parseBlkio(text: string): { read: number; write: number } {
  let read = 0;
  let write = 0;
  for (const line of text.split("\n")) {
    const m = /^\d+:\d+\s+(Read|Write)\s+(\d+)$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === "Read") read += Number(m[2]);
    else write += Number(m[2]);
  }
  return { read, write };
}

function num(text: string | null): number | null {
  if (text === null) return null;
  const t = text.trim();
  return /^\d+$/.test(t) ? Number(t) : null;
}
