/**
 * Whether a service can run more than one replica: not when it publishes fixed host ports, keeps data in named
 * volumes or runs a stateful image, unless its `sundeck.scalable` label says otherwise.
 */
import type { ServiceInfo } from "./model";

/** Images that keep state and must not be scaled by default, by repository name. */
export const STATEFUL_IMAGES = [
  "postgres",
  "mysql",
  "mariadb",
  "mongo",
  "redis",
  "valkey",
  "elasticsearch",
  "opensearch",
  "rabbitmq",
  "clickhouse",
  "cassandra",
  "couchdb",
  "influxdb",
  "etcd",
  "zookeeper",
  "kafka",
  "minio",
];

/** The repository basename of an image reference: `ghcr.io/org/postgres:16@sha256:...` gives `postgres`. */
export function imageBasename(image: string): string {
  const noDigest = image.split("@")[0];
  const last = noDigest.split("/").pop() ?? "";
  return last.split(":")[0].toLowerCase();
}

/** The stateful image family an image belongs to, or null (`postgresql`, `mongodb`, `cp-kafka` count). */
export function statefulImage(image: string): string | null {
  const words = imageBasename(image).split(/[-_.]/);
  for (const name of STATEFUL_IMAGES) {
    if (words.some((w) => w === name || w === `${name}ql` || w === `${name}db`)) return name;
  }
  return null;
}

/** Whether the service may be scaled, and if not a sentence saying why. */
export function scalability(
  service: Pick<ServiceInfo, "scalable" | "containerName" | "ports" | "namedVolumes" | "image">,
): { ok: true } | { ok: false; reason: string } {
  if (service.scalable === false) return { ok: false, reason: "its sundeck.scalable label is false" };
  if (service.containerName) return { ok: false, reason: `sets container_name ${service.containerName}` };
  if (service.scalable === true) return { ok: true };
  const fixed = service.ports.find((p) => p.published !== "");
  if (fixed) {
    const proto = fixed.protocol === "tcp" ? "" : `/${fixed.protocol}`;
    return { ok: false, reason: `publishes host port ${fixed.published}${proto}` };
  }
  if (service.namedVolumes.length) return { ok: false, reason: `mounts named volume ${service.namedVolumes[0]}` };
  const stateful = service.image ? statefulImage(service.image) : null;
  if (stateful) return { ok: false, reason: `runs ${service.image}, a stateful ${stateful} image` };
  return { ok: true };
}
