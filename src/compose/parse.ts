/**
 * Entry point of the compose library: YAML text plus env map in, an interpolated, shape-checked ComposeProject out.
 * Everything later (safety, labels, rewrite) works on this one interpolated document.
 */
import { castTypes } from "./cast";
import { checkDocumentText } from "./characters";
import { interpolate } from "./interpolate";
import { ComposeError, type ComposeProject } from "./model";
import { serviceInfo } from "./service-info";
import { isRecord } from "./values";
import { loadYaml } from "./yaml";

/** Service names compose accepts. */
export const SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

const TOP_LEVEL = new Set(["version", "name", "services", "networks", "volumes", "secrets", "configs", "include"]);
const SECTIONS = ["networks", "volumes", "secrets", "configs"] as const;

/** Refuse keys that would reach the prototype of a plain object. */
function checkKeys(node: unknown, depth = 0): void {
  if (depth > 64) throw new ComposeError(null, "schema", "document is nested too deeply");
  if (Array.isArray(node)) for (const v of node) checkKeys(v, depth + 1);
  else if (isRecord(node)) {
    for (const [k, v] of Object.entries(node)) {
      if (k === "__proto__") throw new ComposeError(null, "schema", "key __proto__ is not allowed");
      checkKeys(v, depth + 1);
    }
  }
}

/** Check the top-level shape of a loaded compose document: a mapping with a non-empty `services` mapping. */
export function checkShape(data: unknown, file = ""): asserts data is Record<string, any> {
  const where = file ? `${file}: ` : "";
  if (!isRecord(data)) throw new ComposeError(null, "schema", `${where}compose file must be a mapping`);
  checkKeys(data);
  for (const key of Object.keys(data)) {
    if (!TOP_LEVEL.has(key) && !key.startsWith("x-")) {
      throw new ComposeError(null, "unknown-key", `${where}unknown top-level key "${key.slice(0, 64)}"`);
    }
  }
  for (const key of SECTIONS) {
    if (data[key] !== undefined && data[key] !== null && !isRecord(data[key])) {
      throw new ComposeError(null, "schema", `${where}${key} must be a mapping`);
    }
  }
  const services = data.services;
  if (!isRecord(services) || Object.keys(services).length === 0) {
    throw new ComposeError(null, "schema", `${where}services must be a non-empty mapping`);
  }
  for (const [name, svc] of Object.entries(services)) {
    if (!SERVICE_NAME.test(name)) throw new ComposeError(null, "schema", `${where}invalid service name "${name.slice(0, 64)}"`);
    if (!isRecord(svc)) throw new ComposeError(name, "schema", `${where}service must be a mapping`);
  }
}

/**
 * Give `environment` and `build.args` entries listed without a value (`- API_KEY`) their value from the app env, or
 * drop them: compose would otherwise copy them from its own process environment, which is Sundeck's.
 */
function resolvePassThrough(doc: Record<string, any>, env: Record<string, string>): void {
  const resolve = (raw: unknown): unknown => {
    if (Array.isArray(raw)) {
      return raw.flatMap((item) => {
        if (typeof item !== "string" || item.includes("=")) return [item];
        return Object.hasOwn(env, item) ? [`${item}=${env[item]}`] : [];
      });
    }
    if (isRecord(raw)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(raw)) {
        if (v !== null) out[k] = v;
        else if (Object.hasOwn(env, k)) out[k] = env[k];
      }
      return out;
    }
    return raw;
  };
  for (const svc of Object.values(doc.services as Record<string, Record<string, any>>)) {
    if (svc.environment !== undefined) svc.environment = resolve(svc.environment);
    if (isRecord(svc.build) && svc.build.args !== undefined) svc.build.args = resolve(svc.build.args);
  }
}

/**
 * Parse compose YAML with the app's env: load (1 MiB, alias budget, unique keys, merge keys), interpolate every
 * value from `env` only, cast typed fields, and read each service. Errors are ComposeErrors (`yaml`, `schema`, ...).
 */
export function parseCompose(text: string, env: Record<string, string>): ComposeProject {
  const data = loadYaml(text);
  checkShape(data);
  const missing = new Set<string>();
  const doc = interpolate(data, env, missing);
  castTypes(doc);
  resolvePassThrough(doc, env);
  checkDocumentText(doc);
  const services = Object.entries(doc.services as Record<string, Record<string, any>>).map(([name, svc]) =>
    serviceInfo(name, svc),
  );
  return { doc, services, missingVars: [...missing].sort() };
}
