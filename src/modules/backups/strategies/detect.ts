/**
 * Which strategies fit an app's services, from what the compose file or the engine says about each: the label
 * `sundeck.backup.strategy` first (a strategy id, a comma list, or `none`), then the image name, then the ports a
 * database listens on; and `volume` for every service with named volumes. Every matching service is listed, not
 * only the first.
 */
import type { ServiceInfo } from "../../../compose/model";
import type { ContainerSummary } from "../../../docker/types";
import { BACKUP_STRATEGIES, type BackupStrategy, type DetectedStrategy } from "../../../shared/backups";

/** Label that overrides detection: a strategy id, several separated by commas, or `none`. */
export const STRATEGY_LABEL = "sundeck.backup.strategy";

/** What detection looks at for one service. */
export interface ServiceFacts {
  service: string;
  image: string | null;
  labels: Record<string, string>;
  /** Container ports the service exposes or publishes. */
  ports: number[];
  /** Named volumes it mounts. */
  namedVolumes: string[];
}

const IMAGES: Array<[RegExp, BackupStrategy]> = [
  [/^(postgres|postgis|timescaledb(-ha|-postgis)?|pgvector|supabase-postgres)$|^postgres/, "postgres"],
  [/^(mysql|mariadb|percona(-server)?|mysql-server)$/, "mysql"],
  [/^(redis|redis-stack(-server)?|valkey|keydb)$/, "redis"],
];

const PORTS: Array<[number, BackupStrategy]> = [
  [5432, "postgres"],
  [3306, "mysql"],
  [6379, "redis"],
];

/** The last path component of an image reference, without tag or digest (`docker.io/bitnami/postgresql:16` -> `postgresql`). */
export function imageName(ref: string): string {
  const noDigest = ref.split("@")[0];
  const last = noDigest.split("/").pop() ?? "";
  return last.split(":")[0].toLowerCase();
}

/** The strategies of every service, in service order; a service may have several (a database and its volume). */
export function detectStrategies(services: ServiceFacts[]): DetectedStrategy[] {
  const out: DetectedStrategy[] = [];
  for (const s of services) {
    const label = s.labels[STRATEGY_LABEL]?.trim();
    if (label) {
      if (label === "none") continue;
      for (const id of label.split(",").map((x) => x.trim())) {
        if ((BACKUP_STRATEGIES as readonly string[]).includes(id)) {
          out.push({ service: s.service, strategy: id as BackupStrategy, reason: `label ${STRATEGY_LABEL}=${label}` });
        }
      }
      continue;
    }
    const found = byImage(s) ?? byPort(s);
    if (found) out.push(found);
    if (s.namedVolumes.length) {
      out.push({ service: s.service, strategy: "volume", reason: `named volumes ${s.namedVolumes.join(", ")}` });
    }
  }
  return out;
}

function byImage(s: ServiceFacts): DetectedStrategy | null {
  if (!s.image) return null;
  const name = imageName(s.image);
  // bitnami and others spell it out: postgresql, mysql, mariadb-galera, redis-cluster
  const normal = name.replace(/^postgresql$/, "postgres").replace(/-(galera|cluster|sentinel|alpine)$/, "");
  for (const [re, strategy] of IMAGES) {
    if (re.test(normal)) return { service: s.service, strategy, reason: `image ${s.image}` };
  }
  return null;
}

function byPort(s: ServiceFacts): DetectedStrategy | null {
  for (const [port, strategy] of PORTS) {
    if (s.ports.includes(port)) return { service: s.service, strategy, reason: `port ${port}` };
  }
  return null;
}

/** Facts of a service of a parsed compose project (`doc` adds `expose`). */
export function factsFromCompose(s: ServiceInfo, doc?: Record<string, any>): ServiceFacts {
  const ports = new Set<number>();
  for (const p of s.ports) addPorts(ports, p.target);
  for (const e of doc?.services?.[s.name]?.expose ?? []) addPorts(ports, String(e).split("/")[0]);
  return { service: s.name, image: s.image, labels: s.labels, ports: [...ports], namedVolumes: s.namedVolumes };
}

/**
 * Facts of a running service from its containers (the first of each service), with the named volumes from
 * `inspect` when given (`Mounts` of the container's JSON).
 */
export function factsFromContainers(list: ContainerSummary[], inspected: Record<string, any> = {}): ServiceFacts[] {
  const seen = new Map<string, ServiceFacts>();
  for (const c of list) {
    const service = c.service ?? c.name;
    if (seen.has(service)) continue;
    const info = inspected[c.id];
    const ports = new Set<number>(c.ports.map((p) => p.privatePort));
    for (const k of Object.keys(info?.Config?.ExposedPorts ?? {})) addPorts(ports, k.split("/")[0]);
    const namedVolumes = (info?.Mounts ?? []).filter((m: any) => m.Type === "volume" && m.Name).map((m: any) => m.Name);
    seen.set(service, { service, image: info?.Config?.Image ?? c.image, labels: c.labels, ports: [...ports], namedVolumes });
  }
  return [...seen.values()];
}

function addPorts(into: Set<number>, spec: string): void {
  const m = /^(\d+)(?:-(\d+))?$/.exec(spec.trim());
  if (!m) return;
  const from = Number(m[1]);
  const to = Math.min(Number(m[2] ?? m[1]), from + 1024);
  for (let p = from; p <= to; p++) into.add(p);
}
