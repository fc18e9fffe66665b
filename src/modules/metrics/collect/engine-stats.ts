/**
 * The fallback source when the cgroup files cannot be read (Sundeck in a container of its own, another cgroup
 * namespace, a layout not known here): one-shot readings of the Engine API's stats, turned into the same counters
 * the cgroup reader gives, a bounded number of requests at a time.
 */
import type { Engine } from "../../../docker/types";
import { type Counters, memoryInUse } from "./cgroup";

/** Counters of one engine stats reading, and when the engine took it (ms; null if it did not say). */
export function countersFromStats(s: any): { at: number | null; counters: Counters } {
  const at = readTime(s?.read);
  const total = s?.cpu_stats?.cpu_usage?.total_usage;
  const mem = s?.memory_stats ?? {};
  const stats = new Map<string, number>(
    Object.entries<unknown>(mem.stats ?? {}).filter((e): e is [string, number] => typeof e[1] === "number"),
  );
  // total_inactive_file only exists on cgroup v1 hosts, as in the docker CLI's own computation
  const version = stats.has("total_inactive_file") ? 1 : 2;
  let netRx: number | null = null;
  let netTx: number | null = null;
  if (s?.networks && typeof s.networks === "object") {
    netRx = 0;
    netTx = 0;
    for (const [iface, n] of Object.entries<any>(s.networks)) {
      if (iface === "lo") continue;
      netRx += Number(n?.rx_bytes ?? 0);
      netTx += Number(n?.tx_bytes ?? 0);
    }
  }
  let blkRead: number | null = null;
  let blkWrite: number | null = null;
  const io = s?.blkio_stats?.io_service_bytes_recursive;
  if (Array.isArray(io)) {
    blkRead = 0;
    blkWrite = 0;
    for (const e of io) {
      const op = String(e?.op ?? "").toLowerCase();
      if (op === "read") blkRead += Number(e.value ?? 0);
      else if (op === "write") blkWrite += Number(e.value ?? 0);
    }
  }
  return {
    at,
    counters: {
      cpuNs: typeof total === "number" ? total : null,
      memBytes: typeof mem.usage === "number" ? memoryInUse(mem.usage, stats, version) : null,
      netRx,
      netTx,
      blkRead,
      blkWrite,
    },
  };
}

/** The engine's `read` time in ms with its sub-millisecond digits (Date.parse drops them), or null. */
export function readTime(v: unknown): number | null {
  const m = typeof v === "string" ? /^(.*T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(v) : null;
  if (!m) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  // Go's zero time ("0001-01-01T00:00:00Z") means no reading
  if (!Number.isFinite(ms) || ms <= 0) return null;
  return ms + (m[2] ? Number(`0${m[2]}`) * 1000 : 0);
}

/**
 * Whether the engine answered without a reading: Go's zero time in `read`, with every counter 0 (dockerd does so when
 * its stats collector has nothing for the container). Taken as a reading, its 0 CPU counter would show as 0 % and
 * the next real one as the container's whole CPU time over one tick.
 */
export function isNoReading(s: any): boolean {
  return typeof s?.read === "string" && s.read.startsWith("0001-01-01");
}

/**
 * Read the stats of `ids` through the engine, `concurrency` requests at a time; a failed reading, or an answer
 * without one, is left out (a gap in the container's series).
 */
export async function engineStats(
  engine: Engine,
  ids: string[],
  concurrency: number,
): Promise<Map<string, { at: number | null; counters: Counters }>> {
  const out = new Map<string, { at: number | null; counters: Counters }>();
  await eachLimited(ids, concurrency, async (id) => {
    try {
      const s = await engine.stats(id);
      if (!isNoReading(s)) out.set(id, countersFromStats(s));
    } catch {
      // gone between the list and the read, or the engine is slow: no sample values this tick
    }
  });
  return out;
}

/** Run `fn` over `items`, at most `limit` at once. */
export async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
}
