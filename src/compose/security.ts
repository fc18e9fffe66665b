/**
 * Compose safety: the one check every deploy path runs (API deploy, reconciler scan, rollback, import) on the
 * interpolated document, throwing a ComposeError naming the service and rule of the first violation. Files pulled in
 * through `extends` and `include` are read and checked with the same rules.
 */
import { readFileSync } from "node:fs";
import { basename, dirname, relative, resolve } from "node:path";
import { checkAllowedKeys } from "./allowlist";
import { castTypes } from "./cast";
import { checkDocumentText } from "./characters";
import { interpolate } from "./interpolate";
import { ComposeError, type ComposeProject, type SafetyPolicy } from "./model";
import { checkShape } from "./parse";
import { hostPathRule, isInside, resolveLinks } from "./paths";
import { checkFileSource, checkPath, checkServicePaths, checkVolumeDefinition, type PathScope } from "./security-paths";
import { checkPrivileges, checkReservedLabels } from "./security-privileges";
import { asList, isRecord, scalarText, truthy } from "./values";
import { loadYaml } from "./yaml";

/** How deep `extends`/`include` files may nest. */
export const MAX_FILE_DEPTH = 5;

/** Reads a file the compose file pulls in; null when it does not exist. */
export type ReadFile = (absPath: string) => string | null;

interface Walk extends PathScope {
  readFile: ReadFile;
  depth: number;
  /** Prefix of docker object names this app owns (`sundeck-<slug>_`). */
  ownPrefix: string;
}

function readFileOrNull(absPath: string): string | null {
  try {
    return readFileSync(absPath, "utf8");
  } catch {
    return null;
  }
}

/** Whether a string still holds a variable reference once `$$` escapes are set aside. */
function usesVariables(node: unknown): boolean {
  if (typeof node === "string") return node.replace(/\$\$/g, "").includes("$");
  if (Array.isArray(node)) return node.some(usesVariables);
  if (isRecord(node)) return Object.values(node).some(usesVariables);
  return false;
}

/** Load, check and walk a file named by `extends` or `include`; it must live inside the app directory. */
function walkFile(service: string | null, rule: "extends" | "include", raw: string, walk: Walk, projectDir?: string): void {
  checkPath(service, rule, `${rule} file`, raw, walk);
  const abs = resolve(walk.baseDir, raw);
  const real = resolveLinks(abs);
  if (!real || !isInside(real, walk.rule.appDirReal)) {
    throw new ComposeError(service, rule, `${rule} file ${JSON.stringify(raw)} must be inside the app directory${walk.note}`);
  }
  const name = JSON.stringify(relative(walk.rule.appDir, abs));
  if (walk.depth >= MAX_FILE_DEPTH) throw new ComposeError(service, rule, `${rule} files are nested too deeply${walk.note}`);
  const text = walk.readFile(abs);
  if (text === null) throw new ComposeError(service, rule, `${rule} file ${name} does not exist${walk.note}`);
  const data = loadYaml(text, name);
  checkShape(data, name);
  // compose interpolates these files itself, with an environment we cannot see from here
  if (usesVariables(data)) {
    throw new ComposeError(service, rule, `${rule} file ${name} uses variables, which are only supported in the main file`);
  }
  // compose merges these files at run time, after our rewrite: a port there would skip the loopback binding
  for (const [svcName, svc] of Object.entries(data.services as Record<string, Record<string, any>>)) {
    if (asList(svc.ports).length) {
      throw new ComposeError(svcName, rule, `ports may only be published in the main compose file (in ${name})`);
    }
  }
  const doc = interpolate(data, {});
  castTypes(doc);
  checkDocumentText(doc, ` (in ${name})`);
  walkDocument(doc, { ...walk, baseDir: projectDir ?? dirname(abs), note: ` (in ${name})`, depth: walk.depth + 1 });
}

/** Network drivers that keep containers behind the host's NAT; host, macvlan, ipvlan and plugins are refused. */
const NETWORK_DRIVERS = new Set(["bridge", "overlay"]);
/** Bridge options that are reviewed; others can route containers past the proxy or take host interfaces. */
const NETWORK_DRIVER_OPTS = new Set([
  "com.docker.network.driver.mtu",
  "com.docker.network.bridge.enable_icc",
  "com.docker.network.bridge.enable_ip_masquerade",
]);

/** The docker name a top-level volume or network refers to when it is not compose's own `<project>_<key>`. */
function dockerName(key: string, def: Record<string, any>): string | null {
  const external = def.external;
  return scalarText(def.name) ?? (isRecord(external) ? scalarText(external.name) : null) ?? (truthy(external) ? key : null);
}

function checkNetworks(doc: Record<string, any>, walk: Walk): void {
  if (!isRecord(doc.networks)) return;
  for (const [key, def] of Object.entries(doc.networks)) {
    if (!isRecord(def)) continue;
    const named = dockerName(key, def);
    if (named?.toLowerCase() === "host") {
      throw new ComposeError(null, "network-mode", `network ${key} is the host network, which is not allowed${walk.note}`);
    }
    const fail = (why: string) => new ComposeError(null, "network-driver", `network ${key} ${why}${walk.note}`);
    const driver = scalarText(def.driver)?.trim();
    if (driver && !NETWORK_DRIVERS.has(driver.toLowerCase())) {
      throw fail(`uses the ${JSON.stringify(driver.slice(0, 64))} driver, which is not allowed: only bridge and overlay are`);
    }
    if (def.driver_opts !== undefined && def.driver_opts !== null) {
      if (!isRecord(def.driver_opts)) throw fail("driver_opts must be a mapping");
      const opt = Object.keys(def.driver_opts).find((k) => !NETWORK_DRIVER_OPTS.has(k));
      if (opt) throw fail(`driver option ${JSON.stringify(opt.slice(0, 80))} is not allowed`);
    }
    if (isRecord(def.ipam)) {
      const ipamDriver = scalarText(def.ipam.driver)?.trim();
      if (ipamDriver && ipamDriver !== "default")
        throw fail(`uses the ipam driver ${JSON.stringify(ipamDriver.slice(0, 64))}, which is not allowed`);
      if (isRecord(def.ipam.options) && Object.keys(def.ipam.options).length) throw fail("ipam options are not allowed");
    }
  }
}

/** Refuse volumes and networks that name another app's docker objects (`sundeck-<other>_...`). */
function checkNames(doc: Record<string, any>, walk: Walk): void {
  for (const kind of ["volumes", "networks"] as const) {
    if (!isRecord(doc[kind])) continue;
    for (const [key, def] of Object.entries(doc[kind])) {
      if (!isRecord(def)) continue;
      const named = dockerName(key, def);
      if (!named?.startsWith("sundeck-") || named.startsWith(walk.ownPrefix)) continue;
      if (kind === "networks" && named === "sundeck-public") continue;
      const singular = kind === "volumes" ? "volume" : "network";
      throw new ComposeError(
        null,
        `${singular}-name`,
        `${singular} ${key} may not use another app's ${singular} ${named}${walk.note}`,
      );
    }
  }
}

function checkTopLevel(doc: Record<string, any>, walk: Walk): void {
  if (isRecord(doc.volumes)) {
    for (const [name, def] of Object.entries(doc.volumes)) checkVolumeDefinition(null, name, def, walk);
  }
  for (const kind of ["secrets", "configs"] as const) {
    if (!isRecord(doc[kind])) continue;
    for (const [name, def] of Object.entries(doc[kind])) checkFileSource(null, kind, name, def, walk);
  }
  checkNetworks(doc, walk);
  checkNames(doc, walk);
}

function walkIncludes(include: unknown, walk: Walk): void {
  for (const entry of asList(include)) {
    const spec = isRecord(entry) ? entry : { path: entry };
    const projectDir = scalarText(spec.project_directory);
    if (projectDir) checkPath(null, "include", "include project_directory", projectDir, walk);
    for (const e of asList(spec.env_file)) {
      const p = scalarText(e);
      if (p) checkPath(null, "include", "include env_file", p, walk);
    }
    const base = projectDir ? resolve(walk.baseDir, projectDir) : undefined;
    for (const p of asList(spec.path)) {
      const file = scalarText(p);
      if (!file) throw new ComposeError(null, "include", `include entries need a path${walk.note}`);
      walkFile(null, "include", file, walk, base);
    }
  }
}

/** Label files are read by compose itself: the labels in them obey the same rules as the file's own. */
function checkLabelFiles(service: string, svc: Record<string, any>, walk: Walk): void {
  for (const p of asList(svc.label_file)) {
    const path = scalarText(p);
    const text = path ? walk.readFile(resolve(walk.baseDir, path)) : null;
    if (text === null) continue;
    const keys = text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"))
      .map((l) => l.split("=")[0]);
    checkReservedLabels(service, keys, ` (in label_file ${JSON.stringify(path)})`);
  }
}

function walkDocument(doc: Record<string, any>, walk: Walk): void {
  checkAllowedKeys(doc, walk.note);
  for (const [name, svc] of Object.entries(doc.services as Record<string, Record<string, any>>)) {
    checkPrivileges(name, svc, walk.note);
    checkServicePaths(name, svc, doc, walk);
    checkLabelFiles(name, svc, walk);
    const file = isRecord(svc.extends) ? scalarText(svc.extends.file) : null;
    if (file) walkFile(name, "extends", file, walk);
  }
  checkTopLevel(doc, walk);
  walkIncludes(doc.include, walk);
}

/**
 * Throw a ComposeError for the first unsafe setting of the project: privileges, namespaces, capabilities, security
 * options, devices, and host paths (see paths.ts) in mounts, env/label files, builds, secrets, configs, `extends` and
 * `include`. `readFile` reads pulled-in files (default: the file system).
 */
export function checkSafety(project: ComposeProject, policy: SafetyPolicy, readFile: ReadFile = readFileOrNull): void {
  const rule = hostPathRule(policy);
  const ownPrefix = `sundeck-${basename(rule.appDir)}_`;
  walkDocument(project.doc, { rule, baseDir: rule.appDir, note: "", readFile, depth: 0, ownPrefix });
}
