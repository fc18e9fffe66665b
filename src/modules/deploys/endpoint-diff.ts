/**
 * What changed in an app's endpoints between two versions, for `endpoint` activity entries: endpoints added and
 * removed, TLS settings, the allowlist and the rate limit. Null when nothing routing-related changed.
 */
import type { AppLabels, Endpoint } from "../../compose/model";

const key = (e: Endpoint) => `${e.hosts.join(",")}${e.path === "/" ? "" : e.path}`;
const describe = (e: Endpoint) => `${key(e)} → ${e.service}:${e.port}`;

/** A snapshot of the routing settings (safe to store: no secrets). */
export function endpointSnapshot(l: AppLabels | null) {
  if (!l) return null;
  return {
    endpoints: l.endpoints.map((e) => ({ hosts: e.hosts, path: e.path, service: e.service, port: e.port, tls: e.tls })),
    access_allow: l.allow,
    ratelimit: l.ratelimit,
  };
}

/** The changes, a one-line summary, and before/after snapshots; null when equal. */
export function diffEndpoints(before: AppLabels | null, after: AppLabels) {
  const changes: string[] = [];
  const was = new Map((before?.endpoints ?? []).map((e) => [key(e), e]));
  const now = new Map(after.endpoints.map((e) => [key(e), e]));
  for (const [k, e] of now) {
    const old = was.get(k);
    if (!old) changes.push(`endpoint added: ${describe(e)}`);
    else {
      if (old.service !== e.service || old.port !== e.port) changes.push(`endpoint ${k} now → ${e.service}:${e.port}`);
      if (old.tls !== e.tls) changes.push(`tls of ${k}: ${old.tls ?? "default"} → ${e.tls ?? "default"}`);
    }
  }
  for (const [k, e] of was) if (!now.has(k)) changes.push(`endpoint removed: ${describe(e)}`);
  const allow = (l: AppLabels | null) => (l?.allow ? l.allow.join(",") : "everyone");
  if (allow(before) !== allow(after)) changes.push(`access: ${allow(before)} → ${allow(after)}`);
  const rl = (l: AppLabels | null) => (l?.ratelimit ? JSON.stringify(l.ratelimit) : "none");
  if (rl(before) !== rl(after)) changes.push(`rate limit: ${rl(before)} → ${rl(after)}`);
  if (changes.length === 0) return null;
  const summary = changes.join("; ");
  return {
    changes,
    summary: summary.length > 300 ? `${summary.slice(0, 297)}...` : summary,
    before: endpointSnapshot(before),
    after: endpointSnapshot(after),
  };
}
