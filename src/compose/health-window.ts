/**
 * How long a deploy waits for containers to become healthy. The stabilisation window (60 s) suits most services, but
 * a healthcheck can declare a slower start (`start_period: 5m` for an app that installs itself on first run): Docker
 * keeps such a container `starting` until a check passes, and calls it unhealthy only after `start_period` plus
 * `retries` failed checks. The window is stretched to that verdict (plus a little), never shortened, and capped, so a
 * declared slow start is waited for and Docker's own answer (healthy, or unhealthy with the check's output) decides.
 * Pure.
 */
import { parseDuration } from "../lib/duration";
import type { ComposeProject } from "./model";
import { hasHealthcheck } from "./service-info";
import { isRecord } from "./values";

/** Docker's values for fields a healthcheck leaves out (the Dockerfile HEALTHCHECK reference). */
const DOCKER_DEFAULT = { intervalMs: 30_000, timeoutMs: 30_000, retries: 3, startPeriodMs: 0 };

/** Added to Docker's verdict time: its checks run on their own timer, and a status event takes a moment to arrive. */
const SLACK_MS = 10_000;

/** The longest a deploy waits for a healthcheck's verdict, whatever the file declares. */
export const HEALTH_WINDOW_CAP_MS = 15 * 60_000;

function durationOf(v: unknown, fallback: number): number {
  const ms = typeof v === "string" ? parseDuration(v) : typeof v === "number" ? v / 1e6 : null;
  // 0 (or nothing) means Docker's default, as in the engine's API
  return ms !== null && ms > 0 ? ms : fallback;
}

/** By when Docker has called a container of this service healthy or unhealthy at the latest; null without a check. */
export function healthVerdictMs(svc: Record<string, any>): number | null {
  if (!hasHealthcheck(svc) || !isRecord(svc.healthcheck)) return null;
  const hc = svc.healthcheck;
  const interval = durationOf(hc.interval, DOCKER_DEFAULT.intervalMs);
  const timeout = durationOf(hc.timeout, DOCKER_DEFAULT.timeoutMs);
  const startPeriod = durationOf(hc.start_period, DOCKER_DEFAULT.startPeriodMs);
  const retries = typeof hc.retries === "number" && hc.retries > 0 ? hc.retries : DOCKER_DEFAULT.retries;
  return startPeriod + interval * retries + timeout;
}

/**
 * The window for these services of a project (all when `services` is omitted): `baseMs`, or longer when one's
 * healthcheck gives its verdict later, at most HEALTH_WINDOW_CAP_MS; `slowest` names that service.
 */
export function healthWindow(
  project: ComposeProject,
  baseMs: number,
  services?: readonly string[],
): { ms: number; slowest: string | null } {
  let ms = baseMs;
  let slowest: string | null = null;
  const all = isRecord(project.doc.services) ? project.doc.services : {};
  for (const [name, svc] of Object.entries(all)) {
    if ((services && !services.includes(name)) || !isRecord(svc)) continue;
    const verdict = healthVerdictMs(svc);
    if (verdict === null) continue;
    const want = Math.min(HEALTH_WINDOW_CAP_MS, verdict + SLACK_MS);
    if (want > ms) {
      ms = want;
      slowest = name;
    }
  }
  return { ms, slowest };
}
