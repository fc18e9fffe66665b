/**
 * Pure parsers of the /proc files the collector reads (stat, loadavg, meminfo, net/dev) and a file reader that
 * answers null instead of throwing, so a missing or unreadable file becomes a null value rather than a failed tick.
 */
import { readFileSync } from "node:fs";

/** The text of a file, or null when it is missing or unreadable. */
export function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** Aggregate CPU time of /proc/stat in clock ticks: all of it, and the part spent busy (not idle, not iowait). */
export interface CpuTimes {
  total: number;
  busy: number;
}

/**
 * The `cpu` line of /proc/stat. Fields: user nice system idle iowait irq softirq steal guest guest_nice; guest time
 * is already counted in user and nice, so only the first eight make up the total.
 */
export function parseProcStat(text: string): CpuTimes | null {
  const line = text.split("\n").find((l) => l.startsWith("cpu "));
  if (!line) return null;
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (f.length < 4 || f.some((n) => !Number.isFinite(n))) return null;
  const total = f.reduce((a, b) => a + b, 0);
  const idle = f[3] + (f[4] ?? 0);
  return { total, busy: total - idle };
}

/** /proc/loadavg: the 1, 5 and 15 minute load averages. */
export function parseLoadavg(text: string): { load1: number; load5: number; load15: number } | null {
  const [a, b, c] = text.trim().split(/\s+/).map(Number);
  if (![a, b, c].every(Number.isFinite)) return null;
  return { load1: a, load5: b, load15: c };
}

/** /proc/meminfo in bytes: used is MemTotal − MemAvailable (what `free` calls used plus reclaimable cache left out). */
export interface MemInfo {
  memTotal: number | null;
  memUsed: number | null;
  swapTotal: number | null;
  swapUsed: number | null;
}

export function parseMeminfo(text: string): MemInfo {
  const kb = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^(\w+):\s+(\d+)(?:\s+kB)?/.exec(line);
    if (m) kb.set(m[1], Number(m[2]) * 1024);
  }
  const memTotal = kb.get("MemTotal") ?? null;
  const avail = kb.get("MemAvailable") ?? null;
  const swapTotal = kb.get("SwapTotal") ?? null;
  const swapFree = kb.get("SwapFree") ?? null;
  return {
    memTotal,
    memUsed: memTotal !== null && avail !== null ? Math.max(0, memTotal - avail) : null,
    swapTotal,
    swapUsed: swapTotal !== null && swapFree !== null ? Math.max(0, swapTotal - swapFree) : null,
  };
}

/** Bytes received and sent, summed over the interfaces kept. */
export interface NetBytes {
  rx: number;
  tx: number;
}

/** /proc/<pid>/net/dev or /proc/net/dev: sums the interfaces `keep` accepts (lo is always left out). */
export function parseNetDev(text: string, keep: (iface: string) => boolean = () => true): NetBytes | null {
  let rx = 0;
  let tx = 0;
  let seen = false;
  for (const line of text.split("\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    if (!name || name.includes("|") || name === "lo" || !keep(name)) continue;
    // receive: bytes packets errs drop fifo frame compressed multicast; then transmit bytes
    const f = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    if (f.length < 9 || !Number.isFinite(f[0]) || !Number.isFinite(f[8])) continue;
    rx += f[0];
    tx += f[8];
    seen = true;
  }
  return seen || text.includes("|") ? { rx, tx } : null;
}

/**
 * Host interfaces counted in the host's network rate. Container traffic already crosses the host's physical
 * interface; its veth pair and the Docker bridges (docker0, br-*) would count it a second and third time, and ifb
 * devices mirror traffic for shaping. So those are left out, as is loopback.
 */
export function isHostInterface(iface: string): boolean {
  return !/^(lo|veth|docker|br-|ifb)/.test(iface);
}
