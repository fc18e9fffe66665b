/**
 * The networks compose creates for a project that may take their subnet from Sundeck's pool: bridge networks the
 * project owns and leaves the addressing of to Docker. A network the compose file configures itself (external, an
 * `ipam` section, another driver, IPv6) is left exactly as written. Pure.
 */
import type { ComposeProject } from "./model";
import { isRecord, scalarText } from "./values";

export interface PooledNetwork {
  /** The key under `networks:` (`default` for the one compose makes when a service names none). */
  key: string;
  /** The engine's name for it: the network's `name`, else `<project>_<key>`. */
  name: string;
}

/** The networks a service is attached to, as compose reads them (none with a network_mode). */
function attached(svc: Record<string, any>): string[] {
  if (scalarText(svc.network_mode)) return [];
  const nets = svc.networks;
  const keys = Array.isArray(nets) ? nets.map(String) : isRecord(nets) ? Object.keys(nets) : [];
  // no networks is `default` (a routed one stays there too: rewrite.ts joinNetwork)
  return keys.length ? keys : ["default"];
}

/** Whether compose would create this network with addressing left to Docker. */
function leftToDocker(def: unknown): boolean {
  if (def === null || def === undefined) return true;
  if (!isRecord(def)) return false;
  if (def.external !== undefined && def.external !== false) return false;
  if (def.ipam !== undefined && def.ipam !== null) return false;
  if (def.enable_ipv6 === true || def.enable_ipv6 === "true") return false;
  const driver = scalarText(def.driver);
  return !driver || driver === "bridge";
}

/** The project's networks that take a pooled subnet, in a stable order (default first, then by key). */
export function pooledNetworks(project: ComposeProject, projectName: string): PooledNetwork[] {
  const declared: Record<string, unknown> = isRecord(project.doc.networks) ? project.doc.networks : {};
  const used = new Set<string>();
  for (const svc of Object.values<any>(project.doc.services ?? {})) {
    if (!isRecord(svc)) continue;
    for (const k of attached(svc)) used.add(k);
  }
  const keys = [...used].sort((a, b) => (a === "default" ? -1 : b === "default" ? 1 : a < b ? -1 : a > b ? 1 : 0));
  const out: PooledNetwork[] = [];
  for (const key of keys) {
    const def = declared[key];
    // a service naming a network the file does not declare is refused by compose; nothing to give it
    if (key !== "default" && !Object.hasOwn(declared, key)) continue;
    if (!leftToDocker(def)) continue;
    const own = isRecord(def) ? scalarText(def.name) : "";
    out.push({ key, name: own || `${projectName}_${key}` });
  }
  return out;
}
