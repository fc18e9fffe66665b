/**
 * The proxy's upstreams from live container state: the replicas of a service that are running, not failing or still
 * starting their healthcheck, and attached to the proxy network, as the `ip:port` addresses the route table holds.
 */
import { PUBLIC_NETWORK } from "./naming";
import type { ContainerSummary } from "./types";

/** Whether a replica may take traffic: running, and healthy or without a healthcheck. */
export function servable(c: ContainerSummary): boolean {
  return c.state === "running" && c.health !== "unhealthy" && c.health !== "starting";
}

/** `host:port` for an address on the proxy network (IPv6 bracketed). */
export function hostPort(ip: string, port: number): string {
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/**
 * The `ip:port` of every servable replica of `service` in an app's containers, in container order; with `only`, of
 * those among the given ids (a rolling deploy's pin).
 */
export function replicaAddresses(
  containers: readonly ContainerSummary[],
  service: string,
  port: number,
  network: string = PUBLIC_NETWORK,
  only?: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  for (const c of containers) {
    if (c.service !== service || !servable(c) || (only !== undefined && !only.has(c.id))) continue;
    const ip = c.networks[network];
    if (ip) out.push(hostPort(ip, port));
  }
  return out;
}

/**
 * The `upstreams` function of the route table input, reading a StatusBoard (or anything listing an app's containers)
 * and the rolling deploys' pins.
 */
export function boardUpstreams(
  board: { containers(slug: string): ContainerSummary[] },
  network: string = PUBLIC_NETWORK,
  pins?: { get(slug: string, service: string): ReadonlySet<string> | undefined },
): (slug: string, service: string, port: number) => string[] {
  return (slug, service, port) => replicaAddresses(board.containers(slug), service, port, network, pins?.get(slug, service));
}
