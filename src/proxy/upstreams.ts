/**
 * Upstreams from live container state: the replicas of a service that are running, not failing or still starting
 * their healthcheck, and attached to the proxy network; and the round-robin choice among them on each request.
 */

import { PUBLIC_NETWORK } from "../docker/naming";
import type { ContainerSummary } from "../docker/types";
import type { Route } from "./route-table";

/** Whether a replica may take traffic: running, and healthy or without a healthcheck. */
export function servable(c: ContainerSummary): boolean {
  return c.state === "running" && c.health !== "unhealthy" && c.health !== "starting";
}

/** `host:port` for an address on the proxy network (IPv6 bracketed). */
export function hostPort(ip: string, port: number): string {
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** The `ip:port` of every servable replica of `service` in an app's containers, in container order. */
export function replicaAddresses(
  containers: readonly ContainerSummary[],
  service: string,
  port: number,
  network: string = PUBLIC_NETWORK,
): string[] {
  const out: string[] = [];
  for (const c of containers) {
    if (c.service !== service || !servable(c)) continue;
    const ip = c.networks[network];
    if (ip) out.push(hostPort(ip, port));
  }
  return out;
}

/** The `upstreams` function of the route table input, reading a StatusBoard (or anything listing an app's containers). */
export function boardUpstreams(
  board: { containers(slug: string): ContainerSummary[] },
  network: string = PUBLIC_NETWORK,
): (slug: string, service: string, port: number) => string[] {
  return (slug, service, port) => replicaAddresses(board.containers(slug), service, port, network);
}

/** The next upstream of a route in round-robin order, or null when it has none. */
export function nextUpstream(route: Route): string | null {
  const n = route.upstreams.length;
  if (n === 0) return null;
  const i = route.next;
  route.next = i + 1 >= n ? 0 : i + 1;
  return route.upstreams[i];
}

/** The replica after `current` (for one retry), or null when there is no other. */
export function otherUpstream(route: Route, current: string): string | null {
  const n = route.upstreams.length;
  if (n < 2) return null;
  const i = route.upstreams.indexOf(current);
  return route.upstreams[(i + 1) % n];
}
