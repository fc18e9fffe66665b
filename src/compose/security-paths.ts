/**
 * Safety rules for every place a compose file names a host path: bind mounts, volume driver binds, env and label
 * files, build contexts, dockerfiles and extra contexts, secret and config files. Each goes through the host path rule.
 */
import { resolve } from "node:path";
import { ComposeError } from "./model";
import { parseMount } from "./mounts";
import { type HostPathRule, hostPathProblem } from "./paths";
import { asList, isRecord, keyValues, scalarText } from "./values";

/** Where the document being checked sits, and how to say so in messages. */
export interface PathScope {
  rule: HostPathRule;
  /** Directory relative paths of this document resolve against. */
  baseDir: string;
  /** Appended to messages, e.g. ` (in base.yml)`. */
  note: string;
}

function quoted(raw: string): string {
  return JSON.stringify(raw.length > 100 ? `${raw.slice(0, 100)}...` : raw);
}

/** Throw when a host path named in the document may not be used. */
export function checkPath(
  service: string | null,
  rule: string,
  what: string,
  raw: string,
  scope: PathScope,
  base?: string,
): void {
  const problem = hostPathProblem(raw, base ?? scope.baseDir, scope.rule);
  if (problem) throw new ComposeError(service, rule, `${what} ${quoted(raw)} is not allowed: ${problem}${scope.note}`);
}

/** Whether a build context or source is remote (a URL, git remote, image or another service) rather than a path. */
export function isRemoteSource(s: string): boolean {
  if (/^oci-layout:\/\//i.test(s)) return false;
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(s) ||
    /^git@/.test(s) ||
    /^github\.com\//.test(s) ||
    /^(docker-image|service|target):/i.test(s)
  );
}

function localPath(s: string): string {
  return s.replace(/^oci-layout:\/\//i, "");
}

/** Throw when a top-level volume definition is a local-driver mount of a host path the rule refuses. */
export function checkVolumeDefinition(service: string | null, name: string, def: unknown, scope: PathScope): void {
  if (!isRecord(def) || !isRecord(def.driver_opts)) return;
  const driver = scalarText(def.driver) ?? "local";
  if (driver !== "local") return;
  const opts = def.driver_opts;
  const type = (scalarText(opts.type) ?? "").trim().toLowerCase();
  const o = (scalarText(opts.o) ?? "")
    .toLowerCase()
    .split(",")
    .map((x) => x.trim());
  const device = scalarText(opts.device)?.trim() ?? "";
  const isBind = type === "none" || o.includes("bind") || o.includes("rbind");
  const what = `volume ${name} device`;
  if (isBind && !device.startsWith("/")) {
    throw new ComposeError(
      service,
      "volume-driver",
      `${what} ${quoted(device)} is not allowed: bind devices must be absolute paths${scope.note}`,
    );
  }
  if (device.startsWith("/")) checkPath(service, "volume-driver", what, device, scope, "/");
}

function checkMounts(service: string, svc: Record<string, any>, doc: Record<string, any>, scope: PathScope): void {
  for (const raw of asList(svc.volumes)) {
    const m = parseMount(raw);
    if (m.type === "bind") checkPath(service, "bind-mount", "bind mount", m.source, scope);
    else if (m.type === "npipe") throw new ComposeError(service, "bind-mount", `npipe mounts are not allowed${scope.note}`);
    else if (m.type === "volume" && isRecord(doc.volumes)) {
      checkVolumeDefinition(service, m.source, doc.volumes[m.source], scope);
    }
  }
}

function filePaths(raw: unknown): string[] {
  return asList(raw)
    .map((e) => (isRecord(e) ? scalarText(e.path) : scalarText(e)))
    .filter((p): p is string => p !== null && p !== "");
}

function checkBuild(service: string, build: unknown, scope: PathScope): void {
  const spec = isRecord(build) ? build : { context: build };
  const context = scalarText(spec.context) ?? ".";
  const remote = isRemoteSource(context);
  if (!remote) checkPath(service, "build-context", "build context", localPath(context), scope);
  const dockerfile = scalarText(spec.dockerfile);
  if (dockerfile && !remote) {
    checkPath(service, "build-context", "dockerfile", dockerfile, scope, resolve(scope.baseDir, context));
  }
  for (const [, value] of keyValues(spec.additional_contexts)) {
    if (value && !isRemoteSource(value)) checkPath(service, "build-context", "additional context", localPath(value), scope);
  }
  for (const [id, value] of keyValues(spec.ssh)) {
    // without a path, ssh forwards the agent of the process running compose: Sundeck's own host credentials
    if (!value)
      throw new ComposeError(service, "build-context", `build ssh ${quoted(id)} is not allowed: agent forwarding${scope.note}`);
    checkPath(service, "build-context", "build ssh key", value, scope);
  }
  for (const entry of [...asList(spec.cache_from), ...asList(spec.cache_to)]) {
    const text = scalarText(entry) ?? "";
    if (!/(^|,)type=local(,|$)/.test(text)) continue;
    for (const m of text.matchAll(/(?:^|,)(?:src|dest)=([^,]*)/g))
      checkPath(service, "build-context", "build cache", m[1], scope);
  }
}

function checkReferences(service: string, svc: Record<string, any>, doc: Record<string, any>, scope: PathScope): void {
  for (const kind of ["secrets", "configs"] as const) {
    const defs = isRecord(doc[kind]) ? doc[kind] : {};
    for (const ref of asList(svc[kind])) {
      const name = isRecord(ref) ? scalarText(ref.source) : scalarText(ref);
      if (name && Object.hasOwn(defs, name)) checkFileSource(service, kind, name, defs[name], scope);
    }
  }
}

/** Check the `file:` of a top-level secret or config. */
export function checkFileSource(
  service: string | null,
  kind: "secrets" | "configs",
  name: string,
  def: unknown,
  scope: PathScope,
): void {
  if (!isRecord(def)) return;
  const file = scalarText(def.file);
  if (file === null) return;
  const rule = kind === "secrets" ? "secret-file" : "config-file";
  checkPath(service, rule, `${kind === "secrets" ? "secret" : "config"} ${name} file`, file, scope);
}

/** Throw the first host path violation of one service (mounts, env and label files, build, secrets and configs). */
export function checkServicePaths(service: string, svc: Record<string, any>, doc: Record<string, any>, scope: PathScope): void {
  checkMounts(service, svc, doc, scope);
  for (const p of filePaths(svc.env_file)) checkPath(service, "env-file", "env_file", p, scope);
  for (const p of filePaths(svc.label_file)) checkPath(service, "label-file", "label_file", p, scope);
  if (svc.build !== undefined && svc.build !== null) checkBuild(service, svc.build, scope);
  checkReferences(service, svc, doc, scope);
}
