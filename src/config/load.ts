/**
 * Loading the server configuration: defaults < YAML file < SUNDECK_* environment < flags, validated once and frozen.
 * With no config file at the default path, the embedded default of CONTRACT.md runs (local data, TLS off).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { randomHex, sha256Hex } from "../lib/crypto";
import { ensurePrivateDir, writeFileAtomic } from "../lib/fs";
import { type Config, ConfigError, defaults, validateConfig } from "./schema";

export const DEFAULT_CONFIG_PATH = "/etc/sundeck/config.yaml";

export interface LoadOptions {
  /** `--config` flag. */
  path?: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Values from flags, highest precedence, as dotted keys. */
  overrides?: Record<string, unknown>;
}

export interface LoadedConfig {
  config: Readonly<Config>;
  /** The file read, or null when the embedded default runs. */
  source: string | null;
}

/** Where the config is looked for, and whether the user named it (a named file must exist). */
export function configPath(opts: Pick<LoadOptions, "path" | "env">): { path: string; explicit: boolean } {
  const env = opts.env ?? process.env;
  if (opts.path) return { path: opts.path, explicit: true };
  if (env.SUNDECK_CONFIG) return { path: env.SUNDECK_CONFIG, explicit: true };
  return { path: DEFAULT_CONFIG_PATH, explicit: false };
}

/** Environment variables and the dotted key each sets, with its type (docs/configuration.md lists each). */
export const ENV_KEYS: Record<string, [string, "string" | "int" | "list" | "bool"]> = {
  SUNDECK_DATA_DIR: ["data_dir", "string"],
  SUNDECK_APPS_DIR: ["apps_dir", "string"],
  SUNDECK_LISTEN_ADDR: ["listen_addr", "string"],
  SUNDECK_HTTP_LISTEN_ADDR: ["http_listen_addr", "string"],
  SUNDECK_MANAGEMENT_PORT: ["management_port", "int"],
  SUNDECK_MANAGEMENT_ADDR: ["management_addr", "string"],
  SUNDECK_DOMAIN: ["domain", "string"],
  SUNDECK_PUBLIC_HOST: ["public_host", "string"],
  SUNDECK_TLS_MODE: ["tls.mode", "string"],
  SUNDECK_TLS_EMAIL: ["tls.email", "string"],
  SUNDECK_MASTER_SECRET: ["master_secret", "string"],
  SUNDECK_AUDIT_RETENTION_DAYS: ["audit_retention_days", "int"],
  SUNDECK_RATELIMIT_REQUESTS: ["ratelimit.requests", "int"],
  SUNDECK_RATELIMIT_WINDOW: ["ratelimit.window", "string"],
  SUNDECK_RATELIMIT_BURST: ["ratelimit.burst", "int"],
  SUNDECK_RATELIMIT_BY: ["ratelimit.by", "string"],
  SUNDECK_REGISTRIES: ["registries", "list"],
  SUNDECK_TRUSTED_PROXIES: ["trusted_proxies", "list"],
  SUNDECK_PROXY_MAX_CONNECTIONS: ["proxy.max_connections", "int"],
  SUNDECK_STREAMS_MAX_OPEN: ["streams.max_open", "int"],
  SUNDECK_METRICS_PROMETHEUS: ["metrics.prometheus", "bool"],
  SUNDECK_WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: ["webhooks.allow_private_destinations", "bool"],
  SUNDECK_STREAMS_MAX_PER_USER: ["streams.max_per_user", "int"],
  SUNDECK_STREAMS_MAX_BUFFERED_MIB: ["streams.max_buffered_mib", "int"],
  SUNDECK_PROXY_MAX_CONNECTIONS_PER_IP: ["proxy.max_connections_per_ip", "int"],
  SUNDECK_PROXY_HTTP2: ["proxy.http2", "bool"],
  SUNDECK_DOCKER_SUBNET_POOL: ["docker.subnet_pool", "string"],
  SUNDECK_DOCKER_SUBNET_PREFIX: ["docker.subnet_prefix", "int"],
  SUNDECK_GIT_SYNC_ENABLED: ["git_sync.enabled", "bool"],
};

/** Load, merge, validate and freeze the configuration. Throws ConfigError with a one-line message. */
export function loadConfig(opts: LoadOptions = {}): LoadedConfig {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const { path, explicit } = configPath(opts);
  const cfg = defaults() as unknown as Record<string, unknown>;
  let source: string | null = null;

  const file = resolve(cwd, path);
  if (existsSync(file)) {
    source = file;
    mergeInto(
      cfg,
      readYaml(source, (doc) => dataDirOf(doc, env, cwd, cfg.data_dir)),
      "",
    );
  } else if (explicit) {
    throw new ConfigError("", `file not found: ${path}`);
  } else {
    // embedded default (CONTRACT.md): a working local instance in ./sundeck-data
    mergeInto(
      cfg,
      {
        data_dir: join(cwd, "sundeck-data"),
        apps_dir: join(cwd, "sundeck-data", "apps"),
        tls: { mode: "off" },
        listen_addr: ":8080",
        management_addr: "127.0.0.1",
        management_port: 8443,
      },
      "",
    );
  }

  for (const [name, [key, kind]] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw === undefined) continue;
    setDotted(cfg, key, coerceEnv(name, key, raw, kind));
  }
  for (const [key, value] of Object.entries(opts.overrides ?? {})) setDotted(cfg, key, value);

  for (const key of ["data_dir", "apps_dir"]) {
    if (typeof cfg[key] === "string" && cfg[key]) cfg[key] = resolve(cwd, cfg[key] as string);
  }
  if (source === null && !cfg.master_secret) cfg.master_secret = embeddedSecret(cfg.data_dir as string);

  validateConfig(cfg);
  return { config: deepFreeze(cfg as Config), source };
}

/** Where the text of a config file the strict parser accepted is remembered, inside the data dir. */
export const CONFIG_CHECKED_FILE = "config-checked";

/**
 * The file's mapping. The strict parser (duplicate keys refused, errors with their line) costs ~10-30 ms at start, so
 * when it accepted this very text before and Bun's native parser read it the same, the native parser's result is
 * taken: the data dir keeps the text's hash (with the runtime's version) after a check where both agreed.
 */
function readYaml(file: string, dataDirOf: (doc: Record<string, unknown>) => string | null): Record<string, unknown> {
  const text = readFileSync(file, "utf8");
  let fast: unknown;
  try {
    fast = Bun.YAML.parse(text);
  } catch {
    fast = undefined;
  }
  const dir = isMapping(fast) ? dataDirOf(fast) : null;
  const stamp = `${sha256Hex(text)} ${Bun.version} ${Bun.revision}\n`;
  if (dir && readChecked(dir) === stamp) return fast as Record<string, unknown>;
  const doc = readYamlStrict(file, text);
  if (dir && Bun.deepEquals(doc, fast, true)) keepChecked(dir, stamp);
  return doc;
}

function readYamlStrict(file: string, text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: false, uniqueKeys: true });
  } catch (e) {
    const msg = (e as Error).message.split("\n")[0];
    throw new ConfigError("", `${file}: invalid YAML: ${msg}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) throw new ConfigError("", `${file}: must be a YAML mapping`);
  return doc as Record<string, unknown>;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** The data dir a file's mapping leads to (SUNDECK_DATA_DIR wins, then the file, then the default), if any. */
function dataDirOf(
  doc: Record<string, unknown>,
  env: Record<string, string | undefined>,
  cwd: string,
  fallback: unknown,
): string | null {
  const dir = env.SUNDECK_DATA_DIR ?? doc.data_dir ?? fallback;
  return typeof dir === "string" && dir ? resolve(cwd, dir) : null;
}

function readChecked(dir: string): string | null {
  try {
    return readFileSync(join(dir, CONFIG_CHECKED_FILE), "utf8");
  } catch {
    return null;
  }
}

/** Remember a checked text, only in a data dir that is ours (a root CLI command must not leave root's files in it). */
function keepChecked(dir: string, stamp: string): void {
  try {
    if (statSync(dir).uid !== process.getuid?.()) return;
    writeFileAtomic(join(dir, CONFIG_CHECKED_FILE), stamp, 0o600);
  } catch {
    // no data dir yet, or not writable: the strict parser runs again next time
  }
}

/** Merge a YAML mapping over the defaults: mappings merge, lists and scalars replace, nulls mean "default". */
function mergeInto(target: Record<string, unknown>, src: Record<string, unknown>, prefix: string): void {
  for (const [k, v] of Object.entries(src)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v === null) continue;
    const cur = target[k];
    if (cur && typeof cur === "object" && !Array.isArray(cur)) {
      if (typeof v !== "object" || Array.isArray(v)) throw new ConfigError(key, "must be a mapping");
      mergeInto(cur as Record<string, unknown>, v as Record<string, unknown>, key);
    } else {
      target[k] = v;
    }
  }
}

function setDotted(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split(".");
  let node = target;
  for (const p of parts.slice(0, -1)) {
    if (!node[p] || typeof node[p] !== "object") node[p] = {};
    node = node[p] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]] = value;
}

function coerceEnv(name: string, key: string, raw: string, kind: string): unknown {
  switch (kind) {
    case "int":
      if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(key, `${name} must be a whole number`);
      return Number(raw.trim());
    case "bool":
      if (!/^(true|false|1|0)$/i.test(raw.trim())) throw new ConfigError(key, `${name} must be true or false`);
      return /^(true|1)$/i.test(raw.trim());
    case "list":
      return raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    default:
      return raw;
  }
}

/** The embedded default's secret: read from `<data_dir>/master_secret`, generated (0600) on first start. */
function embeddedSecret(dataDir: string): string {
  const file = join(dataDir, "master_secret");
  if (existsSync(file)) {
    const s = readFileSync(file, "utf8").trim();
    if (s) return s;
  }
  ensurePrivateDir(dataDir);
  const secret = randomHex(32);
  writeFileAtomic(file, `${secret}\n`, 0o600);
  return secret;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object") {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
