/**
 * The remote client's configuration: named contexts (server URL and API key) in `$XDG_CONFIG_HOME/sundeck/client.yaml`
 * (0600, written atomically), and which one is current. `SUNDECK_URL` / `SUNDECK_API_KEY` override it for CI jobs.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { parse, stringify } from "yaml";
import { writeFileAtomic } from "../lib/fs";
import { ClientError } from "./errors";

/** One server the client talks to. */
export interface ClientContext {
  url: string;
  api_key: string;
}

/** The file's content. */
export interface ClientConfig {
  contexts: Record<string, ClientContext>;
  current_context: string;
}

/** Where and with what the client connects. */
export interface Target {
  url: string;
  apiKey: string;
  /** The context's name, or null when the environment supplied everything. */
  context: string | null;
  /** Where the key came from, for hints: "context NAME" or "SUNDECK_API_KEY". */
  keyFrom: string;
}

type Env = Record<string, string | undefined>;

export const API_KEY = /^sd_[0-9a-f]{64}$/;
export const CONTEXT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** The client config path: `$XDG_CONFIG_HOME/sundeck/client.yaml`, else `~/.config/sundeck/client.yaml`. */
export function clientConfigPath(env: Env = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), ".config");
  return join(base, "sundeck", "client.yaml");
}

/** An empty configuration. */
export const emptyConfig = (): ClientConfig => ({ contexts: {}, current_context: "" });

/** Read the client config; a missing file is an empty config, a malformed one a ClientError naming the file. */
export function loadClientConfig(path = clientConfigPath()): ClientConfig {
  if (!existsSync(path)) return emptyConfig();
  const bad = (why: string) => new ClientError(`client config ${path}: ${why}`);
  let doc: unknown;
  try {
    doc = parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw bad(`not valid YAML: ${(e as Error).message.split("\n")[0]}`);
  }
  if (doc === null || doc === undefined) return emptyConfig();
  if (typeof doc !== "object" || Array.isArray(doc)) throw bad("must be a mapping with contexts and current_context");
  const raw = doc as { contexts?: unknown; current_context?: unknown };
  const cfg = emptyConfig();
  if (raw.contexts !== undefined && raw.contexts !== null) {
    if (typeof raw.contexts !== "object" || Array.isArray(raw.contexts)) throw bad("contexts must be a mapping");
    for (const [name, c] of Object.entries(raw.contexts as Record<string, unknown>)) {
      const ctx = c as Partial<ClientContext> | null;
      if (!ctx || typeof ctx.url !== "string" || typeof ctx.api_key !== "string") {
        throw bad(`context ${name} needs url and api_key strings`);
      }
      cfg.contexts[name] = { url: ctx.url, api_key: ctx.api_key };
    }
  }
  if (raw.current_context !== undefined && raw.current_context !== null) {
    if (typeof raw.current_context !== "string") throw bad("current_context must be a string");
    cfg.current_context = raw.current_context;
  }
  return cfg;
}

/** Write the client config atomically with mode 0600. */
export function saveClientConfig(cfg: ClientConfig, path = clientConfigPath()): void {
  writeFileAtomic(path, stringify({ contexts: cfg.contexts, current_context: cfg.current_context }), 0o600);
}

/** Check a server URL (http or https, a host, no query) and return it without a trailing slash. */
export function checkUrl(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new ClientError(`invalid URL ${JSON.stringify(text)}: expected something like https://deploy.example.com`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new ClientError(`invalid URL ${text}: use http:// or https://`);
  if (u.search || u.hash || u.username || u.password) {
    throw new ClientError(`invalid URL ${text}: no credentials, query or fragment`);
  }
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
}

/** Check an API key's format (`sd_` and 64 hex characters). */
export function checkApiKey(key: string, from = ""): string {
  if (!API_KEY.test(key))
    throw new ClientError(`invalid API key${from ? ` in ${from}` : ""}: expected sd_ followed by 64 hex characters`);
  return key;
}

/** A key safe to show: `sd_1234…abcd`. */
export function maskKey(key: string): string {
  if (!key.startsWith("sd_") || key.length < 15) return "sd_…";
  return `${key.slice(0, 7)}…${key.slice(-4)}`;
}

/** The failure for a context name `cfg` does not hold, naming the ones it does. */
export function unknownContext(cfg: ClientConfig, name: string): ClientError {
  const known = Object.keys(cfg.contexts).sort();
  const hint = known.length ? `known: ${known.join(", ")}` : "none configured: sundeck context add NAME --url URL --api-key KEY";
  return new ClientError(`unknown context ${JSON.stringify(name)} (${hint})`);
}

/**
 * The server to talk to. An explicit `--context` wins; then `SUNDECK_URL` + `SUNDECK_API_KEY` (or the key alone with
 * the current context's URL); then the current context.
 */
export function resolveTarget(cfg: ClientConfig, opts: { context?: string; env?: Env } = {}): Target {
  const env = opts.env ?? process.env;
  const named = (name: string): Target => {
    const c = cfg.contexts[name];
    if (!c) throw unknownContext(cfg, name);
    return { url: checkUrl(c.url), apiKey: checkApiKey(c.api_key, `context ${name}`), context: name, keyFrom: `context ${name}` };
  };
  if (opts.context) return named(opts.context);
  const url = env.SUNDECK_URL;
  const key = env.SUNDECK_API_KEY;
  if (url && key)
    return { url: checkUrl(url), apiKey: checkApiKey(key, "SUNDECK_API_KEY"), context: null, keyFrom: "SUNDECK_API_KEY" };
  if (url) throw new ClientError("SUNDECK_URL is set without SUNDECK_API_KEY: set both");
  const current = cfg.current_context;
  if (key) {
    if (!current || !cfg.contexts[current]) {
      throw new ClientError("SUNDECK_API_KEY is set but there is no current context for the URL: set SUNDECK_URL too");
    }
    return {
      url: checkUrl(cfg.contexts[current].url),
      apiKey: checkApiKey(key, "SUNDECK_API_KEY"),
      context: current,
      keyFrom: "SUNDECK_API_KEY",
    };
  }
  if (!current) {
    throw new ClientError(
      "no server configured: run sundeck context add NAME --url URL --api-key KEY, or set SUNDECK_URL and SUNDECK_API_KEY",
    );
  }
  return named(current);
}
