/**
 * Published ports in every compose syntax (`80`, `"8080:80"`, `"127.0.0.1::80/udp"`, `"[::1]:8080-8081:80-81"`, the
 * long form with `published`/`host_ip`) normalised to one PortSpec, and written back as short syntax.
 */
import { isIP } from "node:net";
import { ComposeError, type PortSpec } from "./model";
import { isRecord, scalarText } from "./values";

const PROTOCOLS = new Set(["tcp", "udp", "sctp"]);

function bad(service: string, raw: unknown, why: string): ComposeError {
  const shown = (typeof raw === "string" ? raw : (JSON.stringify(raw) ?? "")).slice(0, 80);
  return new ComposeError(service, "schema", `invalid port "${shown}": ${why}`);
}

/** Parse "80" or "80-81" into [start, end], or null. */
function range(text: string): [number, number] | null {
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text);
  if (!m) return null;
  const a = Number(m[1]);
  const b = m[2] === undefined ? a : Number(m[2]);
  if (a < 1 || b > 65535 || b < a) return null;
  return [a, b];
}

function validate(service: string, raw: unknown, spec: PortSpec): PortSpec {
  if (!PROTOCOLS.has(spec.protocol)) throw bad(service, raw, `unknown protocol ${spec.protocol}`);
  const target = range(spec.target);
  if (!target) throw bad(service, raw, "container port must be a port or range in 1-65535");
  if (spec.published !== "") {
    const published = range(spec.published);
    if (!published) throw bad(service, raw, "host port must be a port or range in 1-65535");
    const isRange = (r: [number, number]) => r[1] !== r[0];
    if (isRange(published) && isRange(target) && published[1] - published[0] !== target[1] - target[0]) {
      throw bad(service, raw, "host and container port ranges differ in size");
    }
    if (!isRange(published) && isRange(target)) throw bad(service, raw, "a container port range needs a host port range");
  }
  if (spec.hostIp !== "" && !isIP(spec.hostIp)) throw bad(service, raw, `host ip ${spec.hostIp} is not an ip address`);
  return spec;
}

function parseShort(service: string, raw: string): PortSpec {
  let text = raw.trim();
  let protocol = "tcp";
  const slash = text.lastIndexOf("/");
  if (slash >= 0) {
    protocol = text.slice(slash + 1).toLowerCase();
    text = text.slice(0, slash);
  }
  const parts = text.split(":");
  const target = parts[parts.length - 1];
  const published = parts.length >= 2 ? parts[parts.length - 2] : "";
  let hostIp = parts.length >= 3 ? parts.slice(0, -2).join(":") : "";
  if (hostIp.startsWith("[") && hostIp.endsWith("]")) hostIp = hostIp.slice(1, -1);
  return validate(service, raw, { hostIp, published, target, protocol: protocol as PortSpec["protocol"] });
}

function parseLong(service: string, raw: Record<string, any>): PortSpec {
  const target = scalarText(raw.target);
  if (target === null) throw bad(service, raw, "target is required");
  const published = raw.published === undefined || raw.published === null ? "" : scalarText(raw.published);
  if (published === null) throw bad(service, raw, "published must be a port or range");
  const hostIp = raw.host_ip === undefined || raw.host_ip === null ? "" : scalarText(raw.host_ip);
  if (hostIp === null) throw bad(service, raw, "host_ip must be an address");
  const protocol = (scalarText(raw.protocol) ?? "tcp").toLowerCase();
  return validate(service, raw, {
    hostIp: hostIp.replace(/^\[(.*)\]$/, "$1"),
    published: published.trim(),
    target: target.trim(),
    protocol: protocol as PortSpec["protocol"],
  });
}

/** Normalise one `ports` entry of a service; a malformed entry is a ComposeError naming the service. */
export function parsePort(service: string, raw: unknown): PortSpec {
  if (typeof raw === "number") return parseShort(service, String(raw));
  if (typeof raw === "string") return parseShort(service, raw);
  if (isRecord(raw)) return parseLong(service, raw);
  throw bad(service, raw, "expected a string, number or mapping");
}

/** Normalise a service's whole `ports` list. */
export function parsePorts(service: string, raw: unknown): PortSpec[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new ComposeError(service, "schema", "ports must be a list");
  return raw.map((p) => parsePort(service, p));
}

/** Short syntax for a port, bound to `defaultIp` when it names no interface (`127.0.0.1:8080:80`, `127.0.0.1::80/udp`). */
export function formatPort(spec: PortSpec, defaultIp = ""): string {
  const ip = spec.hostIp || defaultIp;
  const proto = spec.protocol === "tcp" ? "" : `/${spec.protocol}`;
  if (!ip) return `${spec.published ? `${spec.published}:` : ""}${spec.target}${proto}`;
  const host = ip.includes(":") ? `[${ip}]` : ip;
  return `${host}:${spec.published}:${spec.target}${proto}`;
}
