/**
 * The compose keys Sundeck has reviewed, per level. A key that is not listed is refused by name (rule `unknown-key`),
 * so a key a future Compose adds stays off until it has been looked at; listed keys whose every use reaches the host
 * are refused with their own rule. Values of listed keys are judged by the other checks (privileges, paths, drivers).
 * `x-*` extension keys are allowed wherever compose allows them (they are dropped from the rendered file).
 */
import { ComposeError } from "./model";
import { isRecord } from "./values";

/**
 * How the value of a key is checked: `null` for a leaf (scalar or free-form value), `keys` for a mapping with known
 * keys (list items that are mappings use the same keys), `each` for a mapping of user-chosen names whose values have
 * a shape, `refuse` for a key that is known and never allowed.
 */
type Shape = null | { keys: Record<string, Shape> } | { each: Shape } | { refuse: [rule: string, why: string] };

const leaf = null;
const keys = (k: Record<string, Shape>): Shape => ({ keys: k });
const each = (s: Shape): Shape => ({ each: s });
const refuse = (rule: string, why: string): Shape => ({ refuse: [rule, why] });
const leaves = (...names: string[]): Record<string, Shape> => Object.fromEntries(names.map((n) => [n, leaf]));

const ULIMITS = each(keys(leaves("soft", "hard")));
const FILE_REFERENCES = keys(leaves("source", "target", "uid", "gid", "mode"));
const UPDATE = keys(leaves("parallelism", "delay", "failure_action", "monitor", "max_failure_ratio", "order"));
const DEVICES = refuse("devices", "device reservations (GPUs, CDI devices) give the container host hardware");

const BUILD = keys({
  ...leaves(
    "context",
    "dockerfile",
    "dockerfile_inline",
    "entitlements",
    "args",
    "ssh",
    "labels",
    "cache_from",
    "cache_to",
    "no_cache",
    "no_cache_filter",
    "additional_contexts",
    "network",
    "provenance",
    "sbom",
    "pull",
    "target",
    "shm_size",
    "extra_hosts",
    "privileged",
    "tags",
    "platforms",
  ),
  secrets: FILE_REFERENCES,
  ulimits: ULIMITS,
});

const DEPLOY = keys({
  ...leaves("mode", "endpoint_mode", "replicas", "labels"),
  rollback_config: UPDATE,
  update_config: UPDATE,
  resources: keys({
    limits: keys(leaves("cpus", "memory", "pids")),
    reservations: keys({
      ...leaves("cpus", "memory"),
      generic_resources: keys({ discrete_resource_spec: keys(leaves("kind", "value")) }),
      devices: DEVICES,
    }),
  }),
  restart_policy: keys(leaves("condition", "delay", "max_attempts", "window")),
  placement: keys({ ...leaves("constraints", "max_replicas_per_node"), preferences: keys(leaves("spread")) }),
});

const MOUNT = keys({
  ...leaves("type", "source", "target", "read_only", "consistency"),
  bind: keys(leaves("propagation", "create_host_path", "selinux", "recursive")),
  volume: keys(leaves("nocopy", "subpath", "labels")),
  tmpfs: keys(leaves("size", "mode")),
  image: keys(leaves("subpath")),
});

const HOOK = refuse("lifecycle-hooks", "lifecycle hooks run commands with their own privileges, outside the service's checks");

/** Every key a service may use. */
export const SERVICE = keys({
  ...leaves(
    "annotations",
    "attach",
    "cap_add",
    "cap_drop",
    "cgroup",
    "cgroup_parent",
    "command",
    "container_name",
    "cpu_count",
    "cpu_percent",
    "cpu_period",
    "cpu_quota",
    "cpu_rt_period",
    "cpu_rt_runtime",
    "cpu_shares",
    "cpus",
    "cpuset",
    "device_cgroup_rules",
    "devices",
    "dns",
    "dns_opt",
    "dns_search",
    "domainname",
    "entrypoint",
    "environment",
    "expose",
    "extra_hosts",
    "group_add",
    "hostname",
    "image",
    "init",
    "ipc",
    "label_file",
    "labels",
    "links",
    "mac_address",
    "mem_limit",
    "mem_reservation",
    "mem_swappiness",
    "memswap_limit",
    "network_mode",
    "oom_kill_disable",
    "oom_score_adj",
    "pid",
    "pids_limit",
    "platform",
    "privileged",
    "profiles",
    "pull_policy",
    "pull_refresh_after",
    "read_only",
    "restart",
    "runtime",
    "scale",
    "security_opt",
    "shm_size",
    "stdin_open",
    "stop_grace_period",
    "stop_signal",
    "storage_opt",
    "tmpfs",
    "tty",
    "user",
    "userns_mode",
    "uts",
    "volumes_from",
    "working_dir",
  ),
  blkio_config: keys({
    weight: leaf,
    ...Object.fromEntries(
      ["device_read_bps", "device_read_iops", "device_write_bps", "device_write_iops"].map((k) => [
        k,
        keys(leaves("path", "rate")),
      ]),
    ),
    weight_device: keys(leaves("path", "weight")),
  }),
  build: BUILD,
  configs: FILE_REFERENCES,
  depends_on: each(keys(leaves("condition", "restart", "required"))),
  deploy: DEPLOY,
  // read only by `docker compose watch`, which Sundeck never runs; dropped from the rendered file
  develop: keys({ watch: keys(leaves("path", "action", "target", "ignore", "include", "initial_sync", "exec")) }),
  env_file: keys(leaves("path", "required", "format")),
  extends: keys(leaves("service", "file")),
  healthcheck: keys(leaves("test", "interval", "timeout", "retries", "start_period", "start_interval", "disable")),
  logging: keys(leaves("driver", "options")),
  networks: each(
    keys(
      leaves(
        "aliases",
        "ipv4_address",
        "ipv6_address",
        "link_local_ips",
        "mac_address",
        "priority",
        "gw_priority",
        "interface_name",
      ),
    ),
  ),
  ports: keys(leaves("name", "mode", "host_ip", "target", "published", "protocol", "app_protocol")),
  secrets: FILE_REFERENCES,
  ulimits: ULIMITS,
  volumes: MOUNT,
  use_api_socket: refuse("docker-socket", "it gives the container the Docker API, which controls the host"),
  post_start: HOOK,
  pre_start: HOOK,
  pre_stop: HOOK,
  provider: refuse("provider", "a provider runs an executable on the host"),
  gpus: DEVICES,
  sysctls: refuse("sysctls", "kernel parameters are not allowed"),
  external_links: refuse("external-links", "it links the service to containers of other projects"),
});

/** Keys of the top-level sections, per entry. */
export const SECTIONS: Record<"volumes" | "networks" | "secrets" | "configs", Shape> = {
  volumes: keys({ ...leaves("driver", "driver_opts", "labels", "name"), external: keys(leaves("name")) }),
  networks: keys({
    ...leaves("driver", "driver_opts", "internal", "enable_ipv4", "enable_ipv6", "attachable", "labels", "name"),
    external: keys(leaves("name")),
    ipam: keys({
      ...leaves("driver", "options"),
      config: keys(leaves("subnet", "ip_range", "gateway", "aux_addresses")),
    }),
  }),
  secrets: keys({ ...leaves("name", "environment", "file", "labels"), external: keys(leaves("name")) }),
  configs: keys({ ...leaves("name", "content", "environment", "file", "labels"), external: keys(leaves("name")) }),
};

/** Keys of an `include` entry in long form. */
export const INCLUDE = keys(leaves("path", "env_file", "project_directory"));

function shown(path: string[]): string {
  return path.map((p) => (/^[\w.-]+$/.test(p) ? p : JSON.stringify(p.slice(0, 64)))).join(".");
}

/** Check one value against its shape; `path` is where it sits below the service or section, for messages. */
function checkValue(value: unknown, shape: Shape, path: string[], service: string | null, note: string): void {
  if (shape === null) return;
  if ("refuse" in shape) {
    const [rule, why] = shape.refuse;
    throw new ComposeError(service, rule, `${shown(path)} is not allowed: ${why}${note}`);
  }
  if ("each" in shape) {
    if (!isRecord(value)) return;
    for (const [k, v] of Object.entries(value)) checkValue(v, shape.each, [...path, k], service, note);
    return;
  }
  const items = Array.isArray(value) ? value : [value];
  for (const item of items) {
    if (!isRecord(item)) continue;
    for (const [k, v] of Object.entries(item)) {
      if (k.startsWith("x-")) continue;
      if (!Object.hasOwn(shape.keys, k)) {
        throw new ComposeError(
          service,
          "unknown-key",
          `unknown key ${shown([...path, k])}: only reviewed compose keys are allowed${note}`,
        );
      }
      checkValue(v, shape.keys[k], [...path, k], service, note);
    }
  }
}

/** Throw for the first key of a (shape-checked) document that is not on the allowlist, or is refused by name. */
export function checkAllowedKeys(doc: Record<string, any>, note = ""): void {
  for (const [name, svc] of Object.entries(doc.services as Record<string, unknown>)) checkValue(svc, SERVICE, [], name, note);
  for (const section of ["volumes", "networks", "secrets", "configs"] as const) {
    if (!isRecord(doc[section])) continue;
    for (const [name, def] of Object.entries(doc[section])) checkValue(def, SECTIONS[section], [section, name], null, note);
  }
  checkValue(doc.include, INCLUDE, ["include"], null, note);
}
