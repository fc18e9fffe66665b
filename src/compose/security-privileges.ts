/**
 * Safety rules about what a container may do to its host, apart from paths: privileged mode, host or foreign
 * namespaces, dangerous capabilities, unconfined security options, devices, and borrowing another container's volumes.
 */
import { ComposeError } from "./model";
import { asList, isRecord, scalarText, truthy } from "./values";

/** Capabilities that let a container break out of, or take over, its host. */
export const DANGEROUS_CAPS = new Set([
  "ALL",
  "SYS_ADMIN",
  "SYS_MODULE",
  "SYS_RAWIO",
  "SYS_PTRACE",
  "SYS_BOOT",
  "SYS_TIME",
  "NET_ADMIN",
  "DAC_READ_SEARCH",
  "MAC_ADMIN",
  "MAC_OVERRIDE",
  "BPF",
  "PERFMON",
  "SYSLOG",
  "LINUX_IMMUTABLE",
  "AUDIT_CONTROL",
  "BLOCK_SUSPEND",
]);

/** A namespace setting that joins the host's namespace or another container's. */
function foreignNamespace(v: unknown): string | null {
  const s = scalarText(v)?.trim();
  if (!s) return null;
  const l = s.toLowerCase();
  return l === "host" || l.startsWith("container:") ? s : null;
}

function namespaces(service: string, svc: Record<string, any>, note: string): void {
  const fail = (rule: string, field: string, value: string) =>
    new ComposeError(service, rule, `${field} ${value} is not allowed${note}`);
  const net = foreignNamespace(svc.network_mode);
  if (net) throw fail("network-mode", "network_mode", net);
  const pid = foreignNamespace(svc.pid);
  if (pid) throw fail("pid", "pid", pid);
  const ipc = foreignNamespace(svc.ipc);
  if (ipc) throw fail("ipc", "ipc", ipc);
  const uts = foreignNamespace(svc.uts);
  if (uts) throw fail("uts", "uts", uts);
  const userns = foreignNamespace(svc.userns_mode);
  if (userns) throw fail("userns", "userns_mode", userns);
  const cgroup = foreignNamespace(svc.cgroup);
  if (cgroup) throw fail("cgroup", "cgroup", cgroup);
  if (svc.cgroup_parent !== undefined && svc.cgroup_parent !== null && svc.cgroup_parent !== "") {
    throw new ComposeError(service, "cgroup", `cgroup_parent is not allowed${note}`);
  }
}

/** Normalise a capability name: upper case, without a `CAP_` prefix. */
export function capName(raw: string): string {
  return raw.trim().toUpperCase().replace(/^CAP_/, "");
}

/** Whether a `security_opt` entry disables confinement (unconfined seccomp or apparmor, label disable, ...). */
export function unconfinedOption(raw: string): boolean {
  const s = raw.trim().toLowerCase().replace(/\s+/g, "");
  const m = /^([a-z-]+)[=:](.*)$/.exec(s);
  if (!m) return false;
  const [, key, value] = m;
  // a custom seccomp profile can allow every syscall, which is the same as unconfined
  if (key === "seccomp") return value !== "" && value !== "default" && value !== "runtime/default";
  // a custom AppArmor profile is whatever the host defines under that name: only Docker's own is reviewed
  if (key === "apparmor") return value !== "docker-default";
  if (key === "label") return value === "disable" || value.includes("spc_t") || value.includes("unconfined_t");
  if (key === "systempaths") return value === "unconfined";
  return false;
}

function buildPrivileges(service: string, build: unknown, note: string): void {
  if (!isRecord(build)) return;
  if (truthy(build.privileged)) throw new ComposeError(service, "privileged", `build.privileged is not allowed${note}`);
  const network = scalarText(build.network)?.trim().toLowerCase();
  if (network === "host") throw new ComposeError(service, "network-mode", `build.network host is not allowed${note}`);
  for (const e of asList(build.entitlements)) {
    const ent = scalarText(e)?.trim().toLowerCase();
    if (ent === "security.insecure")
      throw new ComposeError(service, "privileged", `build entitlement ${ent} is not allowed${note}`);
    if (ent === "network.host") throw new ComposeError(service, "network-mode", `build entitlement ${ent} is not allowed${note}`);
  }
}

/** Runtimes a service may name: the default runc, under either of its names. Others are whatever the host configured. */
const RUNTIMES = new Set(["runc", "io.containerd.runc.v2"]);

/** Labels compose sets itself: a service carrying them would pass for a container of another project. */
const RESERVED_LABEL = /^com\.docker\.compose\./i;

/** Throw when a label key is one compose sets itself (`com.docker.compose.*`). */
export function checkReservedLabels(service: string, keys: string[], note = ""): void {
  const reserved = keys.find((k) => RESERVED_LABEL.test(k.trim()));
  if (reserved) {
    throw new ComposeError(service, "labels", `label ${reserved.trim().slice(0, 80)} is not allowed: compose sets it${note}`);
  }
}

function labelKeys(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw.map((l) => (scalarText(l) ?? "").split("=")[0]);
  return isRecord(raw) ? Object.keys(raw) : [];
}

/** Throw the first privilege or namespace violation of one service. `note` is appended to messages (nested files). */
export function checkPrivileges(service: string, svc: Record<string, any>, note = ""): void {
  if (truthy(svc.privileged)) throw new ComposeError(service, "privileged", `privileged is not allowed${note}`);
  const runtime = scalarText(svc.runtime)?.trim();
  if (runtime && !RUNTIMES.has(runtime)) {
    throw new ComposeError(service, "runtime", `runtime ${runtime.slice(0, 64)} is not allowed: only runc is${note}`);
  }
  // containers inherit their image's labels, so the build's count as well
  const built = isRecord(svc.build) ? svc.build.labels : undefined;
  checkReservedLabels(service, [...labelKeys(svc.labels), ...labelKeys(built)], note);
  namespaces(service, svc, note);
  for (const c of asList(svc.cap_add)) {
    const cap = capName(scalarText(c) ?? "");
    if (DANGEROUS_CAPS.has(cap)) throw new ComposeError(service, "cap-add", `cap_add ${cap} is not allowed${note}`);
  }
  for (const o of asList(svc.security_opt)) {
    const opt = scalarText(o) ?? "";
    if (unconfinedOption(opt)) {
      throw new ComposeError(service, "security-opt", `security_opt ${opt.trim().slice(0, 80)} is not allowed${note}`);
    }
  }
  if (asList(svc.devices).length) throw new ComposeError(service, "devices", `devices are not allowed${note}`);
  if (asList(svc.device_cgroup_rules).length) {
    throw new ComposeError(service, "devices", `device_cgroup_rules are not allowed${note}`);
  }
  if (asList(svc.volumes_from).length) throw new ComposeError(service, "volumes-from", `volumes_from is not allowed${note}`);
  buildPrivileges(service, svc.build, note);
}
