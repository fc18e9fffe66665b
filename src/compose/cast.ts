/**
 * After interpolation every value is a string; compose then casts the fields it knows to be booleans or numbers
 * (`privileged: ${PRIV}` becomes a boolean). We do the same, so the checks and the rendered file see real types.
 */
import { isRecord } from "./values";

type Cast = "bool" | "int" | "float";

/** Paths below a service (`*` matches any key or index), as compose's own interpolation cast table. */
const SERVICE_CASTS: [string, Cast][] = [
  ["configs.*.mode", "int"],
  ["cpu_count", "int"],
  ["cpu_percent", "float"],
  ["cpu_period", "int"],
  ["cpu_quota", "int"],
  ["cpu_rt_period", "int"],
  ["cpu_rt_runtime", "int"],
  ["cpus", "float"],
  ["cpu_shares", "int"],
  ["init", "bool"],
  ["deploy.replicas", "int"],
  ["deploy.update_config.parallelism", "int"],
  ["deploy.update_config.max_failure_ratio", "float"],
  ["deploy.rollback_config.parallelism", "int"],
  ["deploy.rollback_config.max_failure_ratio", "float"],
  ["deploy.restart_policy.max_attempts", "int"],
  ["deploy.placement.max_replicas_per_node", "int"],
  ["healthcheck.retries", "int"],
  ["healthcheck.disable", "bool"],
  ["oom_kill_disable", "bool"],
  ["oom_score_adj", "int"],
  ["pids_limit", "int"],
  ["ports.*.target", "int"],
  ["privileged", "bool"],
  ["read_only", "bool"],
  ["scale", "int"],
  ["secrets.*.mode", "int"],
  ["stdin_open", "bool"],
  ["tty", "bool"],
  ["ulimits.*", "int"],
  ["ulimits.*.hard", "int"],
  ["ulimits.*.soft", "int"],
  ["volumes.*.read_only", "bool"],
  ["volumes.*.volume.nocopy", "bool"],
  ["build.privileged", "bool"],
];

const TOP_CASTS: [string, Cast][] = [
  ["networks.*.external", "bool"],
  ["networks.*.internal", "bool"],
  ["networks.*.attachable", "bool"],
  ["networks.*.enable_ipv6", "bool"],
  ["volumes.*.external", "bool"],
  ["secrets.*.external", "bool"],
  ["configs.*.external", "bool"],
];

function castValue(v: string, cast: Cast): unknown {
  const s = v.trim();
  if (cast === "bool") {
    const l = s.toLowerCase();
    if (["true", "yes", "y", "on"].includes(l)) return true;
    if (["false", "no", "n", "off"].includes(l)) return false;
    return v;
  }
  if (cast === "int") return /^[-+]?\d+$/.test(s) ? Number(s) : v;
  return /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s) ? Number(s) : v;
}

function apply(node: unknown, path: string[], cast: Cast): unknown {
  if (path.length === 0) return typeof node === "string" ? castValue(node, cast) : node;
  const [head, ...rest] = path;
  if (Array.isArray(node)) {
    if (head === "*") for (let i = 0; i < node.length; i++) node[i] = apply(node[i], rest, cast);
  } else if (isRecord(node)) {
    const keys = head === "*" ? Object.keys(node) : Object.hasOwn(node, head) ? [head] : [];
    for (const k of keys) node[k] = apply(node[k], rest, cast);
  }
  return node;
}

/** Cast, in place, the string values of typed fields of an interpolated document. */
export function castTypes(doc: Record<string, any>): void {
  for (const [path, cast] of TOP_CASTS) apply(doc, path.split("."), cast);
  if (!isRecord(doc.services)) return;
  for (const service of Object.values(doc.services)) {
    for (const [path, cast] of SERVICE_CASTS) apply(service, path.split("."), cast);
  }
}
