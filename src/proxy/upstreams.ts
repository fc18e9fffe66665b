/**
 * The replica a request goes to: round-robin over a route's upstream addresses (`ip:port`, filled in by whoever builds
 * the route table), and another one for a single retry.
 */
import type { Route } from "./route-table";

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
