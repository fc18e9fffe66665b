/**
 * The server configuration: one TypeBox schema (types derive from it), the defaults of SPEC.md, and the checks
 * a schema cannot express (address ports, CIDRs, tier order). Every failure names its key in one line.
 */

import { isIP } from "node:net";
import { posix } from "node:path";
import { type Static, Type as T, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { parseDuration } from "../lib/duration";
import { isPrivateRange4, parseRange4 } from "../lib/ipv4-blocks";
import { parseCidr } from "../lib/net";
import { classifyRemote } from "../shared/git-remote";
import { TLS_MODES } from "../shared/tls";

const DURATION = "^(0|(\\d+(\\.\\d+)?(ns|us|µs|ms|s|m|h|d))+)$";
const ADDR = "^(\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9.-]*|\\*):\\d{1,5}$";

/** A schema node carrying the human hint used when a value fails it. */
function hint<S extends TSchema>(schema: S, text: string): S {
  return { ...schema, hint: text } as S;
}

const duration = (text = "a duration such as 60s, 24h or 7d") => hint(T.String({ pattern: DURATION }), `must be ${text}`);
const addr = (optional: boolean) =>
  hint(
    T.String({ pattern: optional ? `^$|${ADDR}` : ADDR }),
    `must be an address such as :443 or 127.0.0.1:8080${optional ? ", or empty to disable" : ""}`,
  );

const Tier = T.Object(
  {
    name: hint(T.String({ minLength: 1, maxLength: 16 }), "must be a tier name such as raw or 1m"),
    resolution: duration(),
    retention: duration(),
  },
  { additionalProperties: false },
);

const count = (min: number, max: number) =>
  hint(T.Integer({ minimum: min, maximum: max }), `must be a whole number from ${min} to ${max}`);

/** The proxy engine's connection caps, head limits and timeouts (src/proxy/h1/limits.ts). */
const ProxyLimits = T.Object(
  {
    max_connections: count(1, 1_000_000),
    max_connections_per_ip: count(1, 1_000_000),
    max_header_bytes: count(1024, 1024 * 1024),
    max_headers: count(8, 10_000),
    header_timeout: duration(),
    idle_timeout: duration(),
    body_timeout: duration(),
    send_timeout: duration(),
    upstream_header_timeout: duration(),
    upstream_body_timeout: duration(),
    upstream_idle_timeout: duration(),
    websocket_connect_timeout: duration(),
    http2: T.Boolean(),
  },
  { additionalProperties: false },
);

const GitSync = T.Object(
  {
    enabled: T.Boolean(),
    remote: T.String(),
    branch: hint(T.String({ minLength: 1, pattern: "^[A-Za-z0-9._/-]+$" }), "must be a branch name"),
    author_name: T.String({ minLength: 1 }),
    author_email: T.String({ minLength: 3 }),
    ssh_key_path: T.String(),
    https_username: T.String(),
    https_token: T.String(),
    poll_interval: duration(),
    webhook_secret: T.String(),
    poll_enabled: T.Boolean(),
    auto_push_enabled: T.Boolean(),
    auto_apply_enabled: T.Boolean(),
    webhook_enabled: T.Boolean(),
    // what a remote may cost (src/modules/gitsync/repo/limits.ts): everything it sends is bounded before it is read
    max_pack_bytes: count(1024 * 1024, 2 ** 40),
    max_objects: count(100, 100_000_000),
    max_file_bytes: count(1024, 1024 ** 3),
    max_object_bytes: count(64 * 1024, 1024 ** 3),
    max_tree_entries: count(10, 10_000_000),
    max_tree_depth: count(2, 256),
    max_paths: count(100, 100_000_000),
    cycle_timeout: duration(),
  },
  { additionalProperties: false },
);

/** The whole server configuration after defaults are applied. */
export const ConfigSchema = T.Object(
  {
    data_dir: hint(T.String({ minLength: 1 }), "must be a directory path"),
    apps_dir: hint(T.String({ minLength: 1 }), "must be a directory path"),
    listen_addr: addr(false),
    http_listen_addr: T.Union([addr(true), T.Null()]),
    management_port: hint(T.Integer({ minimum: 0, maximum: 65535 }), "must be a port number from 0 to 65535"),
    management_addr: hint(T.String({ pattern: "^$|^[0-9a-fA-F:.]+$|^localhost$" }), "must be an IP address or empty"),
    domain: hint(
      T.String({ pattern: "^$|^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$" }),
      "must be a lowercase host name such as deploy.example.com",
    ),
    public_host: hint(T.String({ maxLength: 253, pattern: "^[^\\s/]*$" }), "must be a host name or IP address"),
    tls: T.Object(
      {
        mode: hint(T.Union(TLS_MODES.map((m) => T.Literal(m))), `must be one of ${TLS_MODES.join(", ")}`),
        email: hint(T.String({ pattern: "^$|^[^\\s@]+@[^\\s@]+$" }), "must be an email address"),
        acme_directory: hint(
          T.String({ pattern: "^$|^https://\\S+$" }),
          "must be an https:// ACME directory URL, or empty for Let's Encrypt",
        ),
        acme_ca_file: T.String(),
      },
      { additionalProperties: false },
    ),
    master_secret: hint(T.String({ minLength: 16 }), "is required and must be at least 16 characters"),
    audit_retention_days: hint(T.Integer({ minimum: 0, maximum: 36500 }), "must be a whole number of days, 0 keeps forever"),
    metrics: T.Object(
      {
        tiers: T.Array(Tier, { minItems: 1, maxItems: 8 }),
        /** Serve `GET /metrics` (Prometheus text format) on the management listener to API keys of admins. */
        prometheus: hint(T.Boolean(), "must be true or false"),
      },
      { additionalProperties: false },
    ),
    /** Restores: how much an archive may expand to, and how many run at once server-wide. */
    backups: T.Object(
      { max_restore_bytes: count(1, Number.MAX_SAFE_INTEGER), max_concurrent_restores: count(1, 64) },
      { additionalProperties: false },
    ),
    /** Alert webhook destinations; private addresses are refused unless allowed here (receivers on a LAN). */
    webhooks: T.Object(
      { allow_private_destinations: hint(T.Boolean(), "must be true or false") },
      { additionalProperties: false },
    ),
    ratelimit: T.Object(
      {
        requests: hint(T.Integer({ minimum: 1 }), "must be a positive whole number"),
        window: duration(),
        burst: hint(T.Integer({ minimum: 1 }), "must be a positive whole number"),
        by: hint(T.String({ pattern: "^(ip|path|header:[A-Za-z0-9-]+)$" }), "must be ip, path or header:<name>"),
      },
      { additionalProperties: false },
    ),
    proxy: ProxyLimits,
    /** WebSocket streams (deploy output, container logs, process logs) open at once, and what they may hold unsent. */
    streams: T.Object(
      { max_open: count(1, 1_000_000), max_per_user: count(1, 1_000_000), max_buffered_mib: count(1, 65_536) },
      { additionalProperties: false },
    ),
    compose: T.Object(
      { allowed_host_paths: T.Array(hint(T.String({ minLength: 1 }), "must be absolute host paths")) },
      { additionalProperties: false },
    ),
    /** Where app networks get their subnets: blocks of `subnet_prefix` carved from `subnet_pool` ("" leaves it to Docker). */
    docker: T.Object(
      {
        subnet_pool: hint(T.String({ maxLength: 18 }), "must be a private IPv4 network such as 10.213.0.0/16, or empty"),
        subnet_prefix: count(16, 29),
      },
      { additionalProperties: false },
    ),
    registries: T.Array(hint(T.String({ minLength: 1 }), "must be registry names")),
    trusted_proxies: T.Array(hint(T.String({ minLength: 1 }), "must be IP addresses or CIDRs")),
    git_sync: GitSync,
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;

/** SPEC.md defaults. `http_listen_addr: null` means "derive from tls.mode". `master_secret` has none. */
export function defaults(): Config {
  return {
    data_dir: "/var/lib/sundeck",
    apps_dir: "/etc/sundeck/apps",
    listen_addr: ":443",
    http_listen_addr: null,
    management_port: 8443,
    management_addr: "127.0.0.1",
    domain: "",
    public_host: "",
    tls: { mode: "auto", email: "", acme_directory: "", acme_ca_file: "" },
    master_secret: "",
    audit_retention_days: 365,
    metrics: {
      tiers: [
        { name: "raw", resolution: "10s", retention: "24h" },
        { name: "1m", resolution: "1m", retention: "7d" },
        { name: "5m", resolution: "5m", retention: "30d" },
        { name: "1h", resolution: "1h", retention: "8760h" },
      ],
      prometheus: false,
    },
    backups: { max_restore_bytes: 8 * 1024 ** 3, max_concurrent_restores: 4 },
    webhooks: { allow_private_destinations: false },
    ratelimit: { requests: 200, window: "60s", burst: 50, by: "ip" },
    proxy: {
      max_connections: 4096,
      max_connections_per_ip: 256,
      max_header_bytes: 16 * 1024,
      max_headers: 100,
      header_timeout: "10s",
      idle_timeout: "120s",
      body_timeout: "60s",
      send_timeout: "60s",
      upstream_header_timeout: "60s",
      upstream_body_timeout: "5m",
      upstream_idle_timeout: "4s",
      websocket_connect_timeout: "10s",
      // off until the h2 attack-class budgets of issue 29 are in (docs/proxy.md "HTTP/2")
      http2: false,
    },
    // a follower costs little (one engine follow per container is shared), but a slow one may hold its send buffer
    streams: { max_open: 1000, max_per_user: 100, max_buffered_mib: 64 },
    compose: { allowed_host_paths: [] },
    // 512 blocks of 128 addresses: room for 100 replicas (the scale limit) of a service, and two networks each for 200 apps
    docker: { subnet_pool: "10.213.0.0/16", subnet_prefix: 25 },
    registries: [],
    trusted_proxies: [],
    git_sync: {
      enabled: false,
      remote: "",
      branch: "main",
      author_name: "sundeck",
      author_email: "sundeck@localhost",
      ssh_key_path: "",
      https_username: "",
      https_token: "",
      poll_interval: "60s",
      webhook_secret: "",
      poll_enabled: true,
      auto_push_enabled: true,
      auto_apply_enabled: true,
      webhook_enabled: true,
      max_pack_bytes: 64 * 1024 * 1024,
      max_objects: 100_000,
      max_file_bytes: 1024 * 1024,
      max_object_bytes: 4 * 1024 * 1024,
      max_tree_entries: 10_000,
      max_tree_depth: 16,
      max_paths: 100_000,
      cycle_timeout: "120s",
    },
  };
}

/** A configuration problem, always naming the key. */
export class ConfigError extends Error {
  constructor(
    readonly key: string,
    readonly problem: string,
  ) {
    super(`config: ${key || "(root)"}: ${problem}`);
  }
}

/** Check a merged configuration; throws ConfigError for the first problem. */
export function validateConfig(cfg: unknown): asserts cfg is Config {
  const first = Value.Errors(ConfigSchema, cfg).First();
  if (first) {
    const key = first.path.replace(/^\//, "").replace(/\//g, ".");
    const node = first.schema as { hint?: string };
    const parentHint = findHint(first.path);
    if (first.message.startsWith("Unexpected property")) throw new ConfigError(key, "unknown key");
    // never echo a secret back: messages reach stderr and logs
    const secret = /secret|token|password/i.test(key);
    const got = first.value === undefined || secret ? "" : ` (got ${JSON.stringify(first.value)?.slice(0, 60)})`;
    throw new ConfigError(key, `${node.hint ?? parentHint ?? first.message.toLowerCase()}${got}`);
  }
  const c = cfg as Config;
  for (const [key, text] of [
    ["listen_addr", c.listen_addr],
    ["http_listen_addr", c.http_listen_addr ?? ""],
  ] as const) {
    if (text && Number(text.slice(text.lastIndexOf(":") + 1)) > 65535) throw new ConfigError(key, "port must be at most 65535");
  }
  if (c.management_addr && c.management_addr !== "localhost" && !isIP(c.management_addr)) {
    throw new ConfigError("management_addr", `must be an IP address or empty (got ${JSON.stringify(c.management_addr)})`);
  }
  if (c.tls.mode === "auto" && !c.tls.email) throw new ConfigError("tls.email", "is required when tls.mode is auto");
  c.trusted_proxies.forEach((p, i) => {
    if (!parseCidr(p)) throw new ConfigError(`trusted_proxies.${i}`, `must be an IP address or CIDR (got ${JSON.stringify(p)})`);
  });
  if (parseDuration(c.ratelimit.window)! <= 0) throw new ConfigError("ratelimit.window", "must be longer than 0s");
  for (const [key, value] of Object.entries(c.proxy)) {
    if (typeof value === "string" && parseDuration(value)! < 1000) throw new ConfigError(`proxy.${key}`, "must be at least 1s");
  }
  c.compose.allowed_host_paths.forEach((p, i) => {
    const key = `compose.allowed_host_paths.${i}`;
    if (!p.startsWith("/") || p.includes("\0"))
      throw new ConfigError(key, `must be an absolute host path (got ${JSON.stringify(p)})`);
    if (posix.normalize(p) === "/") throw new ConfigError(key, "cannot be / (that would allow every host path)");
  });
  c.metrics.tiers.forEach((tier, i) => {
    if (parseDuration(tier.resolution)! <= 0) throw new ConfigError(`metrics.tiers.${i}.resolution`, "must be longer than 0s");
    if (parseDuration(tier.retention)! < parseDuration(tier.resolution)!)
      throw new ConfigError(`metrics.tiers.${i}.retention`, "must be at least the tier's resolution");
    if (c.metrics.tiers.findIndex((t) => t.name === tier.name) < i)
      throw new ConfigError(`metrics.tiers.${i}.name`, `${JSON.stringify(tier.name)} is the name of another tier`);
  });
  // each coarser bucket is rolled up once from the finer buckets inside it: one straddling two would be lost
  const byResolution = c.metrics.tiers
    .map((t, i) => ({ i, ms: parseDuration(t.resolution)!, text: t.resolution }))
    .sort((a, b) => a.ms - b.ms);
  byResolution.forEach((t, k) => {
    const finer = byResolution[k - 1];
    if (finer && t.ms % finer.ms !== 0)
      throw new ConfigError(
        `metrics.tiers.${t.i}.resolution`,
        `must be a multiple of the next finer tier's resolution (${finer.text})`,
      );
  });
  if (c.docker.subnet_pool) {
    const pool = parseRange4(c.docker.subnet_pool);
    if (!pool || !isPrivateRange4(pool))
      throw new ConfigError(
        "docker.subnet_pool",
        `must be a private IPv4 network (its own address, such as 10.213.0.0/16), or empty (got ${JSON.stringify(c.docker.subnet_pool)})`,
      );
    if (c.docker.subnet_prefix < pool.bits)
      throw new ConfigError("docker.subnet_prefix", `must be at least the pool's own prefix (/${pool.bits})`);
  }
  if (parseDuration(c.git_sync.cycle_timeout)! < 10_000)
    throw new ConfigError("git_sync.cycle_timeout", "must be at least 10s (the network and the pack walk need time)");
  if (c.git_sync.enabled && !c.git_sync.remote) throw new ConfigError("git_sync.remote", "is required when git_sync is enabled");
  const remote = c.git_sync.remote ? classifyRemote(c.git_sync.remote) : null;
  if (remote && "problem" in remote) throw new ConfigError("git_sync.remote", remote.problem);
  if (c.git_sync.ssh_key_path && c.git_sync.https_token)
    throw new ConfigError("git_sync.https_token", "cannot be set together with git_sync.ssh_key_path");
}

/** The hint of the schema at a JSON pointer, for errors reported on union members. */
function findHint(path: string): string | undefined {
  let node: any = ConfigSchema;
  for (const part of path.split("/").filter(Boolean)) {
    if (node?.properties?.[part]) node = node.properties[part];
    else if (node?.items) node = node.items;
    else return undefined;
  }
  if (node?.hint) return node.hint;
  if (node?.anyOf) return node.anyOf.find((s: any) => s.hint)?.hint;
  return undefined;
}

/** The plain-HTTP listener address in effect: explicit value, else `:80` in auto/local, else disabled. */
export function effectiveHttpListenAddr(c: Config): string {
  if (c.tls.mode === "off") return "";
  if (c.http_listen_addr !== null) return c.http_listen_addr;
  return c.tls.mode === "auto" || c.tls.mode === "local" ? ":80" : "";
}
