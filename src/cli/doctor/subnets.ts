/**
 * Doctor check of the address pool app networks take their subnets from (`docker.subnet_pool`): that it overlaps no
 * route of this host and no network the engine has that Sundeck did not make, and how much of it is given out.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../../config/schema";
import { EngineTransport, engineTarget } from "../../docker/transport";
import { blockCount, coveringRange4, formatRange4, overlaps, parseRange4, type Range4 } from "../../lib/ipv4-blocks";
import { type HostRoute, readHostRoutes } from "../../modules/deploys/subnets";
import { type CheckResult, fail, ok, oneLine, PROBE_TIMEOUT_MS, warn } from "./check";

const NAME = "docker subnet pool";

/** Below this share of free blocks the check warns. */
const LOW = 0.1;

/** What the check looks at, gathered apart so a test can give its own. */
export interface PoolFacts {
  /** Blocks recorded as given and the engine name of their network, from the database (null: none readable yet). */
  given: Array<{ subnet: string; name: string }> | null;
  /** The engine's networks with their subnets (null: the engine did not answer). */
  networks: Array<{ name: string; subnets: string[] }> | null;
  routes: HostRoute[];
}

/** Read the database (read-only: a diagnosis writes nothing), the engine's networks and the host's routes. */
export async function poolFacts(c: Config, env: Record<string, string | undefined>): Promise<PoolFacts> {
  const dbPath = join(c.data_dir, "sundeck.db");
  // no database yet: nothing is given
  let given: PoolFacts["given"] = existsSync(dbPath) ? null : [];
  if (existsSync(dbPath)) {
    try {
      const db = new Database(dbPath, { readonly: true });
      try {
        given = db.query<{ subnet: string; name: string }, []>("SELECT subnet, name FROM app_subnets").all();
      } finally {
        db.close();
      }
    } catch {
      // a database from before the pool, or not readable by this user: the engine's networks still tell
      given = null;
    }
  }
  let networks: PoolFacts["networks"] = null;
  try {
    const http = new EngineTransport(engineTarget(undefined, env), undefined, PROBE_TIMEOUT_MS);
    const list = await http.json<any[]>("GET", "/networks");
    networks = (list ?? []).map((n) => ({
      name: String(n.Name ?? ""),
      subnets: (Array.isArray(n.IPAM?.Config) ? n.IPAM.Config : []).map((x: any) => String(x?.Subnet ?? "")).filter(Boolean),
    }));
  } catch {
    networks = null;
  }
  return { given, networks, routes: readHostRoutes() };
}

/** The pool's state in one line: ok, a warning (overlaps, running low, facts missing), or a fail (nothing free). */
export function poolCheck(c: Config, f: PoolFacts): CheckResult {
  if (!c.docker.subnet_pool)
    return warn(NAME, "off (docker.subnet_pool is empty): app networks use Docker's default pools, about 30 networks");
  const pool = parseRange4(c.docker.subnet_pool);
  if (!pool) return fail(NAME, `docker.subnet_pool ${c.docker.subnet_pool} is not an IPv4 network`);
  const bits = c.docker.subnet_prefix;
  const total = blockCount(pool, bits);
  const given = new Map((f.given ?? []).map((g) => [g.subnet, g.name]));
  const size = 2 ** (32 - bits);
  const blocks = (r: Range4) => {
    // the pool's blocks that this range covers, even in part
    const first = Math.max(r.first, pool.first);
    const last = Math.min(r.last, pool.last);
    if (first > last) return [] as number[];
    const out: number[] = [];
    for (let b = Math.floor((first - pool.first) / size); b <= Math.floor((last - pool.first) / size); b++) out.push(b);
    return out;
  };
  const routeHits = f.routes.filter((r) => overlaps(r.range, pool));
  const foreign: string[] = [];
  const blocked = new Set<number>();
  for (const r of routeHits) for (const b of blocks(r.range)) blocked.add(b);
  let ours = 0;
  for (const n of f.networks ?? []) {
    for (const s of n.subnets) {
      const r = coveringRange4(s);
      if (!r || !overlaps(r, pool)) continue;
      if (given.get(s) === n.name) {
        ours++;
        continue;
      }
      foreign.push(`${n.name} ${s}`);
      for (const b of blocks(r)) blocked.add(b);
    }
  }
  for (const s of given.keys()) {
    const r = parseRange4(s);
    if (r) for (const b of blocks(r)) blocked.delete(b);
  }
  const free = Math.max(0, total - given.size - blocked.size);
  const parts = [
    `${formatRange4(pool)} in /${bits} blocks: ${total} in all, ${f.given === null ? "?" : given.size} given to app networks` +
      `${f.networks === null ? "" : ` (${ours} of them on the engine now)`}, ${free} free`,
  ];
  const problems: string[] = [];
  if (routeHits.length)
    problems.push(
      `overlaps this host's route${routeHits.length > 1 ? "s" : ""} ${routeHits
        .slice(0, 3)
        .map((r) => `${formatRange4(r.range)} (${r.iface})`)
        .join(", ")}: those blocks are skipped, but a pool clear of them is safer`,
    );
  if (foreign.length)
    problems.push(`overlaps networks Sundeck did not make: ${foreign.slice(0, 3).join(", ")}; their blocks are skipped`);
  if (f.networks === null) problems.push("the engine did not answer: its networks are not checked");
  const text = [...parts, ...problems].join("; ");
  if (free === 0) return fail(NAME, `${text}: no block is free for a new app network; set a larger docker.subnet_pool`);
  if (free < total * LOW) return warn(NAME, `${text}: running low; set a larger docker.subnet_pool`);
  return problems.length ? warn(NAME, text) : ok(NAME, text);
}

/** The check as doctor runs it. */
export async function subnetPoolCheck(c: Config, env: Record<string, string | undefined>): Promise<CheckResult> {
  try {
    return poolCheck(c, await poolFacts(c, env));
  } catch (e) {
    return warn(NAME, oneLine(e));
  }
}
