/**
 * The stabilisation window after `up -d`: every expected container running (healthy where it has a healthcheck) and
 * still so after a settle period. A crash or an unhealthy container fails at once, with its last log lines.
 */
import type { ContainerSummary, Engine } from "../../docker/types";

export interface StabilizeOptions {
  /** Give up after this long. */
  windowMs: number;
  /** All ready for this long counts as stable. */
  settleMs?: number;
  pollMs?: number;
  signal?: AbortSignal;
}

/** Services `up` starts, and the ones allowed to finish (one-shot jobs with no restart policy). */
export interface Expectation {
  services: string[];
  oneShot: Set<string>;
}

export type Stability = { ok: true } | { ok: false; error: string };

/** Exit code from a status like "Exited (137) 2 seconds ago". */
export function exitCode(status: string): number | null {
  const m = /^Exited \((-?\d+)\)/.exec(status);
  return m ? Number(m[1]) : null;
}

async function lastLines(engine: Engine, id: string, n = 5): Promise<string> {
  const out: string[] = [];
  try {
    for await (const l of engine.logs(id, { tail: n, follow: false })) out.push(l.line);
  } catch {
    return "";
  }
  return out.length ? `; last output: ${out.join(" | ").slice(0, 600)}` : "";
}

/** Wait until the project is stable, fails, or the window closes. */
export async function waitStable(engine: Engine, project: string, expect: Expectation, o: StabilizeOptions): Promise<Stability> {
  const settle = o.settleMs ?? 2000;
  const poll = o.pollMs ?? 400;
  const deadline = Date.now() + o.windowMs;
  let readySince: number | null = null;
  let waitingFor = "containers to start";
  for (;;) {
    if (o.signal?.aborted) return { ok: false, error: "cancelled" };
    const containers = await engine.containers({ project });
    const bad = await problem(engine, containers, expect);
    if (bad) return { ok: false, error: bad };
    const pending = notReady(containers, expect);
    if (pending) {
      readySince = null;
      waitingFor = pending;
    } else {
      readySince ??= Date.now();
      if (Date.now() - readySince >= settle) return { ok: true };
    }
    if (Date.now() > deadline)
      return { ok: false, error: `not stable after ${Math.round(o.windowMs / 1000)}s: waiting for ${waitingFor}` };
    await new Promise((r) => setTimeout(r, poll));
  }
}

async function problem(engine: Engine, containers: ContainerSummary[], expect: Expectation): Promise<string | null> {
  for (const c of containers) {
    const svc = c.service ?? c.name;
    if (c.health === "unhealthy") return `service ${svc} is unhealthy${await lastLines(engine, c.id)}`;
    if (c.state === "restarting") return `service ${svc} keeps restarting${await lastLines(engine, c.id)}`;
    if (c.state === "exited" || c.state === "dead") {
      const code = exitCode(c.status);
      if (code === 0 && expect.oneShot.has(svc)) continue;
      return `service ${svc} exited${code === null ? "" : ` with code ${code}`}${await lastLines(engine, c.id)}`;
    }
  }
  return null;
}

function notReady(containers: ContainerSummary[], expect: Expectation): string | null {
  for (const svc of expect.services) {
    const mine = containers.filter((c) => c.service === svc);
    if (mine.length === 0) return `service ${svc} to get a container`;
    for (const c of mine) {
      if (c.state === "exited" && expect.oneShot.has(svc)) continue;
      if (c.state !== "running") return `service ${svc} (${c.state})`;
      if (c.health === "starting") return `service ${svc} to become healthy`;
    }
  }
  return null;
}
