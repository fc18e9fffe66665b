/**
 * The stabilisation window after `up -d`: every expected container running, and healthy where it has a healthcheck.
 * Containers without a healthcheck must also stay up for a settle period (the only way to catch a crash right after
 * start); a healthcheck is the service's own readiness signal and needs none. A crash or an unhealthy container fails
 * at once, with its last log lines. The wait wakes on the project's Docker events, with a slow poll as a fallback.
 */
import { exitCode } from "../../docker/exit-code";
import type { ContainerSummary, Engine } from "../../docker/types";

export interface StabilizeOptions {
  /** Give up after this long. */
  windowMs: number;
  /** How long containers without a healthcheck must stay running. */
  settleMs?: number;
  /** Fallback poll when no event arrives. */
  pollMs?: number;
  signal?: AbortSignal;
}

/** Services `up` starts, and the ones allowed to finish (one-shot jobs with no restart policy). */
export interface Expectation {
  services: string[];
  oneShot: Set<string>;
}

export type Stability = { ok: true } | { ok: false; error: string };

/** Longest last-output text kept in an error; its end (where the cause usually is) is what is kept. */
const LAST_OUTPUT_MAX = 600;

/**
 * A container's last lines, oldest first, for an error: `; last output: a | b`. Docker copies stdout and stderr in
 * separate goroutines, so two lines written an instant apart can be logged in the other order; each line's read time
 * puts them back (lines without a time, which Docker does not send when asked for them, go first).
 */
export async function lastLines(engine: Engine, id: string, n = 5): Promise<string> {
  const out: Array<{ at: [number, number]; line: string }> = [];
  try {
    for await (const l of engine.logs(id, { tail: n, follow: false })) out.push({ at: instant(l.ts), line: l.line });
  } catch {
    return "";
  }
  if (!out.length) return "";
  out.sort((a, b) => a.at[0] - b.at[0] || a.at[1] - b.at[1]);
  const text = out.map((l) => l.line).join(" | ");
  return `; last output: ${text.length > LAST_OUTPUT_MAX ? `…${text.slice(-LAST_OUTPUT_MAX)}` : text}`;
}

/** An RFC 3339 time (nine fraction digits at most, as Docker writes them) as [unix seconds, nanoseconds]; [0, 0] without one. */
function instant(ts: string | null): [number, number] {
  const m = ts ? /^(.+T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(.*)$/.exec(ts) : null;
  const s = m ? Date.parse(`${m[1]}${m[3]}`) : Number.NaN;
  return Number.isNaN(s) ? [0, 0] : [s / 1000, Number((m![2] ?? "").padEnd(9, "0"))];
}

/** Resolves on the next container event of the project (or never); call again for the next one. */
function eventWaker(engine: Engine, project: string, signal: AbortSignal) {
  let wake: () => void = () => {};
  let next = new Promise<void>((r) => (wake = r));
  void (async () => {
    try {
      for await (const _ of engine.events({
        filters: { type: ["container"], label: [`com.docker.compose.project=${project}`] },
        signal,
      })) {
        wake();
        next = new Promise<void>((r) => (wake = r));
      }
    } catch {
      // the fallback poll carries on
    }
  })();
  return () => next;
}

/** Wait until the project is stable, fails, or the window closes. */
export async function waitStable(engine: Engine, project: string, expect: Expectation, o: StabilizeOptions): Promise<Stability> {
  const settle = o.settleMs ?? 1500;
  const poll = o.pollMs ?? 1000;
  const deadline = Date.now() + o.windowMs;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  o.signal?.addEventListener("abort", onAbort);
  const nextEvent = eventWaker(engine, project, stop.signal);
  // when each unchecked container was first seen running
  const runningSince = new Map<string, number>();
  let waitingFor = "containers to start";
  try {
    for (;;) {
      if (o.signal?.aborted) return { ok: false, error: "cancelled" };
      const containers = await engine.containers({ project });
      const bad = await problem(engine, containers, expect);
      if (bad) return { ok: false, error: bad };
      const now = Date.now();
      for (const c of containers) if (c.state === "running" && !runningSince.has(c.id)) runningSince.set(c.id, now);
      const pending = notReady(containers, expect);
      // containers without a healthcheck that have not yet been up for the settle period
      const unsettled = containers.filter(
        (c) => c.state === "running" && c.health === null && now - runningSince.get(c.id)! < settle,
      );
      if (!pending && unsettled.length === 0) return { ok: true };
      waitingFor = pending ?? `${unsettled[0].service ?? unsettled[0].name} to stay up`;
      if (now > deadline)
        return { ok: false, error: `not stable after ${Math.round(o.windowMs / 1000)}s: waiting for ${waitingFor}` };
      const settleLeft = unsettled.length
        ? Math.max(10, settle - (now - Math.min(...unsettled.map((c) => runningSince.get(c.id)!))))
        : poll;
      await Promise.race([nextEvent(), new Promise((r) => setTimeout(r, Math.min(poll, settleLeft)))]);
    }
  } finally {
    o.signal?.removeEventListener("abort", onAbort);
    stop.abort();
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
