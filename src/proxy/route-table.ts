/**
 * The proxy's route table: every (host, path prefix) an app or the management UI answers on, built once per change
 * from labels and live upstreams, then swapped in whole. Pure: no I/O. Lookups are a map hit plus a scan of that
 * host's prefixes, longest first.
 */
import type { AppLabels, Endpoint } from "../compose/model";
import { parseDuration } from "../lib/duration";
import { CidrSet, parseCidr } from "../lib/net";
import { normalizeHost, wildcardParent } from "./hosts";
import type { TlsMode } from "./types";

/** Rate limit settings of one app, resolved from its labels over the global defaults. */
export interface RouteRateLimit {
  requests: number;
  windowMs: number;
  burst: number;
  /** `ip`, `path` or `header:<name>`. */
  by: string;
  /** Lower-cased header name when `by` is `header:<name>`, else null. */
  header: string | null;
  /** Identity of these settings: a limiter is rebuilt only when it changes. */
  id: string;
}

/** One routed endpoint; shared by all its hosts. */
export interface Route {
  /** App slug; null for the management route. */
  app: string | null;
  /** Compose service ("" for the management route). */
  service: string;
  /** Path prefix, `/` for everything. */
  prefix: string;
  /** TLS mode of the endpoint (its label, else the global mode; null when neither is known). */
  tls: TlsMode | null;
  /** `host:port` of each healthy replica (IPv6 bracketed). */
  upstreams: readonly string[];
  ratelimit: RouteRateLimit | null;
  /** Who may reach the app (`sundeck.access.allow`); null when everyone may. */
  allow: CidrSet | null;
  /** The app is stopped on purpose. */
  stopped: boolean;
  /** Round-robin cursor over `upstreams`. */
  next: number;
}

/** The global `ratelimit` block, window already in ms. */
export interface RateLimitDefaults {
  requests: number;
  windowMs: number;
  burst: number;
  by: string;
}

export interface RouteTableInput {
  apps: Array<{ slug: string; endpoints: Endpoint[]; labels: AppLabels; stopped: boolean }>;
  /** `host:port` of the healthy running replicas of one service port. */
  upstreams: (slug: string, service: string, port: number) => string[];
  /** The management UI and API, served on `domain`. */
  management?: { hosts: string[]; upstream: string; tls?: TlsMode | null };
  /** The global `ratelimit` block supplies the fields an app's rate-limit labels leave out. */
  defaults: { ratelimit: RateLimitDefaults; tls?: TlsMode | null };
}

/** A built, immutable route table. */
export interface RouteTable {
  /** The route for a Host (any case, with or without port) and a request path (no query), or null. */
  lookup(host: string, path: string): Route | null;
  /** Every host routed (wildcards as `*.example.com`), sorted: what certificates are needed for. */
  hosts(): string[];
  /** Every host with the TLS mode of its first route. */
  hostTls(): Array<{ host: string; tls: TlsMode | null }>;
  /** Slugs of the apps with at least one route. */
  readonly apps: ReadonlySet<string>;
  /** Every distinct route. */
  readonly routes: readonly Route[];
  /** Host+path pairs claimed by more than one app; the first claim (management, then running apps by slug) won. */
  readonly conflicts: readonly string[];
}

/** Whether `path` lies under `prefix` on a segment boundary (`/api` covers `/api` and `/api/x`, not `/apix`). */
export function prefixMatches(prefix: string, path: string): boolean {
  if (prefix === "/") return true;
  if (!path.startsWith(prefix)) return false;
  return path.length === prefix.length || path.charCodeAt(prefix.length) === 47;
}

function pick(list: Route[] | undefined, path: string): Route | null {
  if (!list) return null;
  for (const r of list) if (prefixMatches(r.prefix, path)) return r;
  return null;
}

/**
 * An app's rate limit: only when its labels ask for one (a page load of a real app behind one shared address is a
 * hundred requests); fields the labels leave out come from the global `ratelimit` block.
 */
function resolveRateLimit(labels: AppLabels["ratelimit"], d: RateLimitDefaults): RouteRateLimit | null {
  if (labels === null) return null;
  const windowMs = labels.window !== undefined ? (parseDuration(labels.window) ?? d.windowMs) : d.windowMs;
  const requests = labels.requests ?? d.requests;
  const burst = labels.burst ?? d.burst;
  const by = labels.by ?? d.by;
  const header = by.startsWith("header:") ? by.slice(7).toLowerCase() : null;
  return { requests, windowMs, burst, by, header, id: `${requests}/${windowMs}/${burst}/${by}` };
}

/** An allowlist from label entries; entries that do not parse are left out, so a bad list denies rather than allows. */
function allowSet(entries: string[] | null): CidrSet | null {
  if (!entries) return null;
  return new CidrSet(entries.filter((e) => parseCidr(e) !== null));
}

/** Build the table. Management hosts win over apps; running apps are placed before stopped ones, then by slug. */
export function buildRouteTable(input: RouteTableInput): RouteTable {
  const exact = new Map<string, Route[]>();
  const wild = new Map<string, Route[]>();
  const routes: Route[] = [];
  const apps = new Set<string>();
  const conflicts: string[] = [];
  const hostTls = new Map<string, TlsMode | null>();
  const claimed = new Set<string>();

  const add = (host: string, route: Route): void => {
    const h = host.startsWith("*.") ? `*.${normalizeHost(host.slice(2))}` : normalizeHost(host);
    const key = `${h}${route.prefix}`;
    if (claimed.has(key)) {
      conflicts.push(key);
      return;
    }
    claimed.add(key);
    const map = h.startsWith("*.") ? wild : exact;
    const k = h.startsWith("*.") ? h.slice(2) : h;
    const list = map.get(k) ?? [];
    list.push(route);
    map.set(k, list);
    if (!hostTls.has(h)) hostTls.set(h, route.tls);
  };

  if (input.management && input.management.hosts.length > 0) {
    const m = input.management;
    const route: Route = {
      app: null,
      service: "",
      prefix: "/",
      tls: m.tls ?? input.defaults.tls ?? null,
      upstreams: [m.upstream],
      ratelimit: null,
      allow: null,
      stopped: false,
      next: 0,
    };
    routes.push(route);
    for (const h of m.hosts) add(h, route);
  }

  const ordered = [...input.apps].sort((a, b) => Number(a.stopped) - Number(b.stopped) || a.slug.localeCompare(b.slug));
  for (const app of ordered) {
    if (app.endpoints.length === 0) continue;
    const ratelimit = resolveRateLimit(app.labels.ratelimit, input.defaults.ratelimit);
    const allow = allowSet(app.labels.allow);
    for (const ep of app.endpoints) {
      const route: Route = {
        app: app.slug,
        service: ep.service,
        prefix: ep.path || "/",
        tls: ep.tls ?? input.defaults.tls ?? null,
        upstreams: app.stopped ? [] : input.upstreams(app.slug, ep.service, ep.port),
        ratelimit,
        allow,
        stopped: app.stopped,
        next: 0,
      };
      routes.push(route);
      apps.add(app.slug);
      for (const h of ep.hosts) add(h, route);
    }
  }

  // longest prefix first, so the first match is the most specific
  for (const map of [exact, wild]) for (const list of map.values()) list.sort((a, b) => b.prefix.length - a.prefix.length);
  const sortedHosts = [...hostTls.keys()].sort();

  return {
    lookup(host, path) {
      const h = normalizeHost(host);
      const hit = pick(exact.get(h), path);
      if (hit) return hit;
      const parent = wildcardParent(h);
      return parent === null ? null : pick(wild.get(parent), path);
    },
    hosts: () => [...sortedHosts],
    hostTls: () => sortedHosts.map((host) => ({ host, tls: hostTls.get(host) ?? null })),
    apps,
    routes,
    conflicts,
  };
}
