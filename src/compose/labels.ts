/**
 * Per-app settings from `sundeck.*` service labels (CONTRACT "Compose labels"): endpoints (`sundeck.domain` and
 * `sundeck.endpoints.<n>.*`), rate limit overrides, the access allowlist and registries.
 */
import {
  badLabel,
  readAllow,
  readCount,
  readHosts,
  readPath,
  readPort,
  readRateKey,
  readRegistries,
  readTls,
  readWindow,
} from "./label-values";
import { type AppLabels, ComposeError, type ComposeProject, type Endpoint, type ServiceInfo } from "./model";
import { ROLLOUT_LABELS, rolloutSettings } from "./rollout-labels";
import { asList, scalarText } from "./values";

const ENDPOINT_KEY = /^sundeck\.(?:endpoints\.([A-Za-z0-9_-]+)\.)?(domain|port|path|tls)$/;
const APP_KEYS = new Set([
  "sundeck.scalable",
  "sundeck.registries",
  "sundeck.access.allow",
  "sundeck.ratelimit.requests",
  "sundeck.ratelimit.window",
  "sundeck.ratelimit.burst",
  "sundeck.ratelimit.by",
  // read by backups (src/modules/backups/strategies): the strategy override and the database / RDB path
  "sundeck.backup.strategy",
  "sundeck.backup.path",
  // read by deploys (rollout-labels.ts): how the service is replaced, and the readiness probe of new replicas
  ...ROLLOUT_LABELS,
]);

type Group = Partial<Record<"domain" | "port" | "path" | "tls", string>>;

/** The distinct container ports a service exposes (`ports` targets and `expose`), for inferring the endpoint port. */
function exposedPorts(service: ServiceInfo, doc: Record<string, any>): string[] {
  const expose = asList(doc.services?.[service.name]?.expose).map((e) => (scalarText(e) ?? "").replace(/\/(tcp|udp|sctp)$/, ""));
  return [...new Set([...service.ports.map((p) => p.target), ...expose])];
}

function endpointGroups(service: ServiceInfo): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const [key, value] of Object.entries(service.labels)) {
    if (!key.startsWith("sundeck.")) continue;
    const m = ENDPOINT_KEY.exec(key);
    if (!m) {
      if (!APP_KEYS.has(key)) throw new ComposeError(service.name, "label", `unknown label ${key.slice(0, 80)}`);
      continue;
    }
    const id = m[1] ?? "";
    const group = groups.get(id) ?? {};
    group[m[2] as keyof Group] = value;
    groups.set(id, group);
  }
  return groups;
}

function endpointOf(service: ServiceInfo, doc: Record<string, any>, id: string, g: Group): Endpoint {
  const prefix = id === "" ? "sundeck." : `sundeck.endpoints.${id}.`;
  if (g.domain === undefined) {
    const first = (["port", "path", "tls"] as const).find((k) => g[k] !== undefined);
    throw badLabel(service.name, `${prefix}${first}`, `needs ${prefix}domain`);
  }
  const hosts = readHosts(service.name, `${prefix}domain`, g.domain);
  let port: number;
  if (g.port !== undefined) port = readPort(service.name, `${prefix}port`, g.port);
  else {
    const exposed = exposedPorts(service, doc);
    if (exposed.length !== 1 || !/^\d+$/.test(exposed[0])) {
      throw badLabel(
        service.name,
        `${prefix}port`,
        `is required when the service exposes ${exposed.length ? "more than one port" : "no port"}`,
      );
    }
    port = readPort(service.name, `${prefix}port`, exposed[0]);
  }
  const path = g.path === undefined ? "/" : readPath(service.name, `${prefix}path`, g.path);
  const tls = g.tls === undefined ? null : readTls(service.name, `${prefix}tls`, g.tls);
  return { service: service.name, hosts, port, path, tls };
}

/** Take an app-wide label value; two services giving different values is an error. */
function appValue<T>(current: { value: T; from: string } | null, service: string, label: string, value: T) {
  if (current && JSON.stringify(current.value) !== JSON.stringify(value)) {
    throw badLabel(service, label, `differs from the value on service ${current.from}`);
  }
  return current ?? { value, from: service };
}

/** Read the app's labels; a bad value, an endpoint without a usable port, or a host+path claimed twice is a ComposeError. */
export function parseAppLabels(project: ComposeProject): AppLabels {
  const endpoints: Endpoint[] = [];
  const claimed = new Map<string, string>();
  const rate: Record<string, { value: string | number; from: string } | null> = {};
  let allow: { value: string[]; from: string } | null = null;
  let registries: { value: string[]; from: string } | null = null;
  for (const service of project.services) {
    const name = service.name;
    for (const [id, group] of endpointGroups(service)) {
      const ep = endpointOf(service, project.doc, id, group);
      for (const host of ep.hosts) {
        const key = `${host}${ep.path}`;
        if (claimed.has(key)) throw new ComposeError(name, "label", `host ${host} with path ${ep.path} is claimed twice`);
        claimed.set(key, name);
      }
      endpoints.push(ep);
    }
    const l = service.labels;
    // checked here, so a bad value refuses the deploy before anything runs; read again when the service is replaced
    rolloutSettings(service);
    const readers = {
      requests: (v: string) => readCount(name, "sundeck.ratelimit.requests", v, 1),
      window: (v: string) => readWindow(name, "sundeck.ratelimit.window", v),
      burst: (v: string) => readCount(name, "sundeck.ratelimit.burst", v, 0),
      by: (v: string) => readRateKey(name, "sundeck.ratelimit.by", v),
    };
    for (const [key, read] of Object.entries(readers)) {
      const label = `sundeck.ratelimit.${key}`;
      if (l[label] !== undefined) rate[key] = appValue(rate[key] ?? null, name, label, read(l[label]));
    }
    if (l["sundeck.access.allow"] !== undefined) {
      allow = appValue(allow, name, "sundeck.access.allow", readAllow(name, "sundeck.access.allow", l["sundeck.access.allow"]));
    }
    if (l["sundeck.registries"] !== undefined) {
      const value = readRegistries(name, "sundeck.registries", l["sundeck.registries"]);
      registries = appValue(registries, name, "sundeck.registries", value);
    }
  }
  const ratelimit = Object.keys(rate).length
    ? (Object.fromEntries(Object.entries(rate).map(([k, v]) => [k, v!.value])) as AppLabels["ratelimit"])
    : null;
  return { endpoints, ratelimit, allow: allow?.value ?? null, registries: registries?.value ?? null };
}
