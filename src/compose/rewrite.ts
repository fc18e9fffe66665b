/**
 * The compose file Sundeck actually runs, rendered from the interpolated (and checked) document: published ports
 * bound to 127.0.0.1 unless an interface is given, routed services on the proxy network, every `$` escaped so compose
 * does not interpolate a second time, and nothing compose v1 would refuse (`name`, `version`).
 */
import { createHash } from "node:crypto";
import { ComposeError, type ComposeProject } from "./model";
import { formatPort, parsePorts } from "./ports";
import { isRecord, scalarText } from "./values";
import { dumpYaml } from "./yaml";

/** Interface a port is bound to when the compose file names none. */
export const LOOPBACK = "127.0.0.1";

/** The `ports` of one service as short-syntax strings, bound to loopback unless an interface was given. */
export function renderedPorts(service: Record<string, any>, name = "service"): string[] {
  return parsePorts(name, service.ports).map((p) => formatPort(p, LOOPBACK));
}

/** Every `$` escaped as `$$`, so compose does not interpolate a second time. */
function escapeDollars(node: unknown): unknown {
  if (typeof node === "string") return node.replaceAll("$", "$$$$");
  if (Array.isArray(node)) return node.map(escapeDollars);
  if (isRecord(node)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) out[k] = escapeDollars(v);
    return out;
  }
  return node;
}

/** Drop `x-*` extension keys of a mapping (compose ignores them; nothing unreviewed is written). */
function dropExtensions(node: unknown): void {
  if (isRecord(node)) for (const k of Object.keys(node)) if (k.startsWith("x-")) delete node[k];
}

function joinNetwork(name: string, svc: Record<string, any>, network: string): void {
  const mode = scalarText(svc.network_mode);
  if (mode) throw new ComposeError(name, "network-mode", `a service with a domain cannot set network_mode ${mode}`);
  const nets = svc.networks;
  if (Array.isArray(nets)) {
    if (!nets.includes(network)) svc.networks = [...nets, network];
  } else if (isRecord(nets) && Object.keys(nets).length > 0) {
    if (!Object.hasOwn(nets, network)) svc.networks = { ...nets, [network]: {} };
  } else {
    // a service with no networks is on `default`; keep it there so in-app names still resolve
    svc.networks = ["default", network];
  }
}

/** The label Sundeck puts on every service it runs: the hash of the service's rendered definition. */
export const REV_LABEL = "sundeck.rev";

/** The hash of a rendered service definition (before its rev label): equal for an unchanged service. */
export function serviceRev(svc: Record<string, any>): string {
  return createHash("sha256").update(JSON.stringify(svc)).digest("hex").slice(0, 16);
}

/** Set a label on a service whose `labels` is a mapping, a `KEY=VALUE` list, or absent. */
function setLabel(svc: Record<string, any>, key: string, value: string): void {
  if (Array.isArray(svc.labels)) {
    svc.labels = [...svc.labels.filter((l) => !String(l).startsWith(`${key}=`)), `${key}=${value}`];
  } else {
    svc.labels = { ...(isRecord(svc.labels) ? svc.labels : {}), [key]: value };
  }
}

/**
 * Render the compose YAML Sundeck runs for a project. `routed` names the services that serve endpoints: they join
 * `publicNetwork`, declared external. `subnets` gives networks (by key) their IPv4 subnet. With `revs` every service
 * carries its REV_LABEL (the file compose runs; the checks compare the file without them). The output is accepted by docker-compose v1.29 and docker compose v2.
 */
export function renderCompose(
  project: ComposeProject,
  opts: { routed: string[]; publicNetwork: string; subnets?: Readonly<Record<string, string>>; revs?: boolean },
): string {
  const doc = structuredClone(project.doc);
  delete doc.name;
  delete doc.version;
  dropExtensions(doc);
  for (const section of ["services", "volumes", "networks", "secrets", "configs"]) {
    if (isRecord(doc[section])) for (const entry of Object.values(doc[section])) dropExtensions(entry);
  }
  const services = doc.services as Record<string, Record<string, any>>;
  for (const [name, svc] of Object.entries(services)) {
    // only `docker compose watch` reads it, and Sundeck never runs that
    delete svc.develop;
    if (svc.ports !== undefined && svc.ports !== null) svc.ports = renderedPorts(svc, name);
    if (opts.routed.includes(name)) joinNetwork(name, svc, opts.publicNetwork);
  }
  const routed = opts.routed.filter((n) => Object.hasOwn(services, n));
  if (routed.length) {
    const networks = isRecord(doc.networks) ? doc.networks : {};
    doc.networks = { ...networks, [opts.publicNetwork]: { external: true } };
  }
  // what each service is made of, for a rolling deploy to tell a changed service from one left as it runs
  if (opts.revs) for (const svc of Object.values(services)) setLabel(svc, REV_LABEL, serviceRev(svc));
  // subnets from Sundeck's pool, for networks the file leaves the addressing of to Docker (pooled-networks.ts)
  for (const [key, subnet] of Object.entries(opts.subnets ?? {})) {
    const networks = isRecord(doc.networks) ? doc.networks : {};
    const def = isRecord(networks[key]) ? networks[key] : {};
    doc.networks = { ...networks, [key]: { ...def, ipam: { config: [{ subnet }] } } };
  }
  return dumpYaml(escapeDollars(doc));
}
