/**
 * Sundeck's own address pool for app networks (`docker.subnet_pool`, blocks of `docker.subnet_prefix`). A stock
 * engine's default pools hold about 30 bridge networks, one per compose project: past them every deploy fails. Each
 * network an app's compose file leaves the addressing of to Docker gets a block of the pool instead, recorded here
 * (kept across restarts and upgrades, given back when the app is removed). A block is never one that overlaps a
 * network the engine has or a route of the host; a network that already exists keeps the subnet it has.
 */
import { readFileSync } from "node:fs";
import { and, eq } from "drizzle-orm";
import type { PooledNetwork } from "../../compose/pooled-networks";
import type { Db } from "../../db";
import { appSubnets } from "../../db/schema";
import type { EngineNetwork } from "../../docker/types";
import {
  blockCount,
  coveringRange4,
  firstFreeBlock,
  formatRange4,
  overlaps,
  parseRange4,
  type Range4,
} from "../../lib/ipv4-blocks";

export interface SubnetPoolDeps {
  db: Db;
  /** `docker.subnet_pool`; "" leaves addressing to Docker. */
  pool: string;
  prefix: number;
  now: () => string;
  /** The host's routes (default: /proc/net/route, without Docker's bridges and the default route). */
  hostRoutes?: () => HostRoute[];
}

export interface HostRoute {
  iface: string;
  range: Range4;
}

/** A deploy that finds no free block: its error names the setting to change. */
export class SubnetPoolExhausted extends Error {}

/** Interfaces of Docker's own bridges: their routes are networks the engine lists anyway. */
const DOCKER_IFACE = /^(docker\d*|br-[0-9a-f]{12}|docker_gwbridge|veth.*)$/;

/** IPv4 routes of this host's network namespace (/proc/net/route: little-endian hex), Docker's bridges left out. */
export function readHostRoutes(text?: string): HostRoute[] {
  let body = text;
  if (body === undefined) {
    try {
      body = readFileSync("/proc/net/route", "utf8");
    } catch {
      return [];
    }
  }
  const out: HostRoute[] = [];
  for (const line of body.split("\n").slice(1)) {
    const [iface, dest, , , , , , mask] = line.trim().split(/\s+/);
    if (!iface || !dest || !mask || DOCKER_IFACE.test(iface)) continue;
    const d = leHex(dest);
    const m = leHex(mask);
    if (d === null || m === null || m === 0) continue;
    const bits = 32 - Math.log2((~m >>> 0) + 1);
    if (!Number.isInteger(bits)) continue;
    const range = coveringRange4(`${ipText(d)}/${bits}`);
    if (range) out.push({ iface, range });
  }
  return out;
}

const leHex = (h: string): number | null => {
  if (!/^[0-9A-Fa-f]{8}$/.test(h)) return null;
  const n = Number.parseInt(h, 16);
  // the kernel prints the address in host (little-endian) order
  return (((n & 0xff) << 24) | ((n & 0xff00) << 8) | ((n >>> 8) & 0xff00) | (n >>> 24)) >>> 0;
};
const ipText = (a: number) => `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`;

/** Build the pool. */
export function createSubnetPool(d: SubnetPoolDeps) {
  const pool = d.pool ? parseRange4(d.pool) : null;
  const routes = d.hostRoutes ?? (() => readHostRoutes());
  const o = d.db.orm;
  const rows = () => o.select().from(appSubnets).all();

  /** The subnets of engine networks that are not one of ours (same name and subnet as a record), as ranges. */
  const foreign = (networks: readonly EngineNetwork[], ours: ReadonlyMap<string, string>) =>
    networks
      .flatMap((n) => n.subnets.filter((s) => ours.get(s) !== n.name))
      .map((s) => coveringRange4(s))
      .filter((r): r is Range4 => r !== null);

  return {
    enabled: pool !== null,

    /**
     * The subnet of each network (by compose key) that should get one: a recorded block, else a new one. A network
     * that already exists on the engine is left to what it has (an app deployed before the pool, or given its block
     * earlier: then the same block is named again, which compose accepts). Throws SubnetPoolExhausted.
     */
    assign(slug: string, wanted: readonly PooledNetwork[], networks: readonly EngineNetwork[]): Record<string, string> {
      if (!pool || wanted.length === 0) return {};
      const out: Record<string, string> = {};
      const byName = new Map(networks.map((n) => [n.name, n]));
      return d.db.tx(() => {
        const all = rows();
        // subnet -> the engine name of the network it was given to
        const ours = new Map(all.map((r) => [r.subnet, r.name]));
        const forget = (app: string, network: string, subnet: string) => {
          o.delete(appSubnets)
            .where(and(eq(appSubnets.slug, app), eq(appSubnets.network, network)))
            .run();
          ours.delete(subnet);
        };
        const mine = new Map(all.filter((r) => r.slug === slug).map((r) => [r.network, r.subnet]));
        for (const w of wanted) {
          const existing = byName.get(w.name);
          const recorded = mine.get(w.key);
          if (existing) {
            // compose keeps a network that exists; naming another subnet than it has would only confuse
            if (recorded && existing.subnets.includes(recorded)) out[w.key] = recorded;
            else if (recorded) forget(slug, w.key, recorded);
            continue;
          }
          if (recorded) {
            const r = parseRange4(recorded);
            // a network made outside Sundeck (or a route) took the block since: the app gets another one
            const clash = !r || foreign(networks, ours).some((t) => overlaps(t, r)) || routes().some((h) => overlaps(h.range, r));
            if (!clash) {
              out[w.key] = recorded;
              continue;
            }
            forget(slug, w.key, recorded);
          }
          const taken = [
            ...[...ours.keys()].map((s) => parseRange4(s)).filter((r): r is Range4 => r !== null),
            ...foreign(networks, ours),
            ...routes().map((h) => h.range),
          ];
          const block = firstFreeBlock(pool, d.prefix, taken);
          if (!block) {
            const total = blockCount(pool, d.prefix);
            throw new SubnetPoolExhausted(
              `no free /${d.prefix} block is left in docker.subnet_pool ${d.pool} for network ${w.key} of ${slug} ` +
                `(${total} blocks, ${ours.size} given to apps, the rest overlap other networks or host routes): ` +
                "set a larger docker.subnet_pool or a longer docker.subnet_prefix in the config and restart Sundeck " +
                "(sundeck doctor shows the pool's use)",
            );
          }
          const subnet = formatRange4(block);
          o.insert(appSubnets).values({ subnet, slug, network: w.key, name: w.name, createdAt: d.now() }).run();
          ours.set(subnet, w.name);
          out[w.key] = subnet;
        }
        return out;
      });
    },

    /** The blocks recorded for these networks of the app (no engine call: for a start or restart). */
    recorded(slug: string, wanted: readonly PooledNetwork[]): Record<string, string> {
      if (!pool || wanted.length === 0) return {};
      const mine = new Map(
        o
          .select()
          .from(appSubnets)
          .where(eq(appSubnets.slug, slug))
          .all()
          .map((r) => [r.network, r.subnet]),
      );
      const out: Record<string, string> = {};
      for (const w of wanted) {
        const s = mine.get(w.key);
        if (s) out[w.key] = s;
      }
      return out;
    },

    /** Give an app's blocks back (it was removed; its networks are gone or go with it). */
    release(slug: string): void {
      o.delete(appSubnets).where(eq(appSubnets.slug, slug)).run();
    },

    /** The pool, its size and what is given out, for doctor and the docs. */
    usage() {
      const given = rows();
      return {
        pool: d.pool,
        prefix: d.prefix,
        blocks: pool ? blockCount(pool, d.prefix) : 0,
        given: given.map((r) => ({ slug: r.slug, network: r.network, subnet: r.subnet })),
      };
    },
  };
}

export type SubnetPool = ReturnType<typeof createSubnetPool>;
