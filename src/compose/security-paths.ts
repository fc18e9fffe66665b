/**
 * Safety rules for every place a compose file names a host path: bind mounts, volume driver binds, env and label
 * files, build contexts, dockerfiles and extra contexts, secret and config files. Each goes through the host path rule.
 */
import { resolve } from "node:path";
import { ComposeError } from "./model";
import { parseMount } from "./mounts";
import { type HostPathRule, hostPathProblem } from "./paths";
import { asList, isRecord, keyValues, scalarText, truthy } from "./values";
import { parseVolumeSpec } from "./volume-spec";

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

/** Mount options of a local tmpfs volume that are reviewed; anything else (`bind` above all) is refused. */
const TMPFS_OPTIONS = /^(size|mode|uid|gid|nr_inodes|nr_blocks)=[^,]*$|^(noexec|nosuid|nodev|exec|suid|dev|ro|rw)$/;
/** Remote file systems a local volume may mount: the device is on another machine. */
const REMOTE_TYPES = new Set(["nfs", "nfs4", "cifs", "smb3"]);
const VOLUME_DRIVER_OPTS = new Set(["type", "o", "device"]);

function refuseVolume(service: string | null, name: string, why: string, scope: PathScope): never {
  throw new ComposeError(service, "volume-driver", `volume ${name} ${why}${scope.note}`);
}

/**
 * Throw when a top-level volume definition is not a plain named volume: only the local driver (any case), and of its
 * `driver_opts` only tmpfs, remote file systems (NFS, CIFS) and binds of a host path the path rule allows.
 */
export function checkVolumeDefinition(service: string | null, name: string, def: unknown, scope: PathScope): void {
  if (!isRecord(def)) return;
  const driver = scalarText(def.driver)?.trim() ?? "local";
  if (driver.toLowerCase() !== "local") {
    refuseVolume(service, name, `uses the ${quoted(driver)} driver, which is not allowed: only local volumes are`, scope);
  }
  if (def.driver_opts === undefined || def.driver_opts === null) return;
  if (!isRecord(def.driver_opts)) refuseVolume(service, name, "driver_opts must be a mapping", scope);
  const opts = def.driver_opts;
  const unknown = Object.keys(opts).find((k) => !VOLUME_DRIVER_OPTS.has(k));
  if (unknown) refuseVolume(service, name, `driver_opts ${quoted(unknown)} is not allowed: only type, o and device are`, scope);
  const type = (scalarText(opts.type) ?? "").trim().toLowerCase();
  const o = (scalarText(opts.o) ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
  const device = scalarText(opts.device)?.trim() ?? "";
  const isBind = o.some((x) => /^r?bind$/i.test(x));
  if (isBind && (type === "" || type === "none")) {
    if (!device.startsWith("/"))
      refuseVolume(service, name, `device ${quoted(device)}: bind devices must be absolute paths`, scope);
    checkPath(service, "volume-driver", `volume ${name} device`, device, scope, "/");
    return;
  }
  if (type === "tmpfs") {
    const bad = o.find((x) => !TMPFS_OPTIONS.test(x.toLowerCase()));
    if (bad) refuseVolume(service, name, `tmpfs option ${quoted(bad)} is not allowed`, scope);
    return;
  }
  if (REMOTE_TYPES.has(type)) {
    // a remote device names another machine (`host:/export`, `:/export` with o=addr=..., `//host/share`)
    if (isBind || !(/^[^/]*:\//.test(device) || /^\/\/[^/]/.test(device))) {
      refuseVolume(service, name, `${type} device ${quoted(device)} is not allowed: it must name a remote export`, scope);
    }
    return;
  }
  refuseVolume(
    service,
    name,
    `driver_opts type ${quoted(type || "(none)")} is not allowed: only tmpfs, nfs, nfs4, cifs and binds are`,
    scope,
  );
}

/** Host files every container may read: the host's time zone. Only read-only, only these exact paths. */
const TIME_FILES = new Set(["/etc/localtime", "/etc/timezone"]);

function readOnlyMount(raw: unknown): boolean {
  return isRecord(raw) ? truthy(raw.read_only) : parseVolumeSpec(scalarText(raw) ?? "").readOnly;
}

function checkMounts(service: string, svc: Record<string, any>, doc: Record<string, any>, scope: PathScope): void {
  for (const raw of asList(svc.volumes)) {
    // compose v2 does not split on a colon inside `${...}` (a literal here, `$$` escaped) while v1 does
    if (typeof raw === "string" && raw.includes("${")) {
      throw new ComposeError(
        service,
        "bind-mount",
        `volume ${quoted(raw)} is not allowed: \${ in a volume makes compose v1 and v2 read it differently${scope.note}`,
      );
    }
    const m = parseMount(raw);
    if (m.type === "bind") {
      if (TIME_FILES.has(m.source) && readOnlyMount(raw)) continue;
      checkPath(service, "bind-mount", "bind mount", m.source, scope);
    } else if (m.type === "npipe" || m.type === "cluster" || m.type === "unknown") {
      const kind = isRecord(raw) ? (scalarText(raw.type) ?? "(none)") : m.type;
      throw new ComposeError(service, "bind-mount", `mount type ${quoted(kind)} is not allowed${scope.note}`);
    } else if (m.type === "volume" && isRecord(doc.volumes)) {
      checkVolumeDefinition(service, m.source, doc.volumes[m.source], scope);
    }
    if (isRecord(raw)) {
      for (const kind of ["volume", "image"] as const) {
        const sub = isRecord(raw[kind]) ? scalarText(raw[kind].subpath) : null;
        if (sub && (sub.startsWith("/") || sub.split("/").includes(".."))) {
          throw new ComposeError(
            service,
            "bind-mount",
            `${kind} subpath ${quoted(sub)} must stay inside the ${kind}${scope.note}`,
          );
        }
      }
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
