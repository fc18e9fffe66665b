/**
 * Doctor checks of the ports Sundeck listens on: free, held by the running Sundeck (its /api/health answers on the
 * management port and the same process holds the port), or taken by something else (named from /proc when visible).
 */
import { readdirSync, readlinkSync } from "node:fs";
import { createServer } from "node:net";
import { readText } from "../../modules/metrics/collect/procfs";
import { type CheckResult, fail, ok, PROBE_TIMEOUT_MS, warn } from "./check";

/** A listener Sundeck would open: its label, host ("" = every interface) and port. */
export interface PortSpec {
  label: string;
  host: string;
  port: number;
}

/** `:443`, `127.0.0.1:8080`, `[::1]:443`, `*:80` as host and port. */
export function parseListenAddr(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(":");
  let host = addr.slice(0, i);
  if (host === "*") host = "";
  if (host.startsWith("[")) host = host.slice(1, -1);
  return { host, port: Number(addr.slice(i + 1)) };
}

type BindOutcome = "free" | "in-use" | "denied" | string;

/** Try to listen on host:port, then let go at once. */
export function tryBind(host: string, port: number): Promise<BindOutcome> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", (e: NodeJS.ErrnoException) => {
      resolve(e.code === "EADDRINUSE" ? "in-use" : e.code === "EACCES" ? "denied" : `${e.code ?? e.message}`);
    });
    srv.listen({ host: host || undefined, port, exclusive: true }, () => srv.close(() => resolve("free")));
  });
}

/** What answers /api/health on the management port: a Sundeck (its version), or null. */
export async function sundeckHealth(url: string): Promise<{ version: string } | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: "manual" });
    const body = (await res.json().catch(() => null)) as { status?: unknown; version?: unknown } | null;
    return body && body.status === "ok" && typeof body.version === "string" ? { version: body.version } : null;
  } catch {
    return null;
  }
}

/** The process holding a listening TCP port, from /proc (null when not visible to this user). */
export interface Holder {
  pid: number;
  command: string;
}

export function portHolder(port: number): Holder | null {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of (readText(table) ?? "").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT, st 0A is LISTEN, inode is the 10th field
      if (f.length > 9 && f[3] === "0A" && Number.parseInt(f[1].split(":")[1], 16) === port) inodes.add(f[9]);
    }
  }
  if (inodes.size === 0) return null;
  const wanted = new Set([...inodes].map((i) => `socket:[${i}]`));
  let pids: string[] = [];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link = "";
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (wanted.has(link)) return { pid: Number(pid), command: commandOf(pid) };
    }
  }
  return null;
}

function commandOf(pid: string): string {
  return readText(`/proc/${pid}/comm`)?.trim() || "?";
}

/**
 * Check every port: a free port is ok; a taken one is ok only when the running Sundeck holds it (the management port
 * answers /api/health as Sundeck, and for the proxy ports the same process holds them).
 */
export async function portChecks(specs: PortSpec[], healthUrl: string | null): Promise<CheckResult[]> {
  const outcomes = await Promise.all(specs.map((s) => tryBind(s.host, s.port)));
  const taken = specs.filter((_, i) => outcomes[i] === "in-use");
  const ours = taken.length && healthUrl ? await sundeckHealth(healthUrl) : null;
  const holders = new Map(taken.map((s) => [s.port, portHolder(s.port)]));
  const mgmt = specs.find((s) => s.label === "management");
  const mgmtHolder = mgmt ? holders.get(mgmt.port) : undefined;

  return specs.map((s, i) => {
    const name = `port ${s.port} (${s.label})`;
    const where = `${s.host || "*"}:${s.port}`;
    const outcome = outcomes[i];
    if (outcome === "free") return ok(name, `${where} is free`);
    if (outcome === "denied") {
      return warn(name, `${where}: this user may not bind it (ports below 1024 need root or CAP_NET_BIND_SERVICE)`);
    }
    if (outcome !== "in-use") return fail(name, `${where} cannot be bound: ${outcome}`);
    const holder = holders.get(s.port) ?? null;
    const who = holder ? `${holder.command} (pid ${holder.pid})` : "another process";
    if (ours && s === mgmt)
      return ok(name, `${where} held by the running Sundeck ${ours.version}${holder ? ` (pid ${holder.pid})` : ""}`);
    if (ours && holder && mgmtHolder && holder.pid === mgmtHolder.pid) {
      return ok(name, `${where} held by the running Sundeck (pid ${holder.pid})`);
    }
    if (ours && !holder)
      return warn(name, `${where} in use; its holder is not visible, a Sundeck answers on the management port`);
    return fail(name, `${where} is taken by ${who}: stop it or change the listen address in the config`);
  });
}
