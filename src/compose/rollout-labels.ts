/**
 * How a service is replaced at a deploy (CONTRACT "Compose labels"): `sundeck.deploy.strategy` (rolling or recreate),
 * `sundeck.deploy.drain_timeout`, and the readiness probe of new replicas, `sundeck.healthcheck.path|interval|timeout`
 * (an HTTP GET through the service's endpoint port; without a path the compose healthcheck decides, and without that
 * the port accepting connections). Which strategy a service gets is decided here too, with the reason, said in the
 * deploy log. Pure.
 */
import { parseDuration } from "../lib/duration";
import { badLabel, pathProblem } from "./label-values";
import type { ServiceInfo } from "./model";

export const ROLLOUT_LABELS = [
  "sundeck.deploy.strategy",
  "sundeck.deploy.drain_timeout",
  "sundeck.healthcheck.path",
  "sundeck.healthcheck.interval",
  "sundeck.healthcheck.timeout",
] as const;

/** Bounds of the probe and the drain (a label outside them is refused, naming the bound). */
export const PROBE_INTERVAL = { min: 250, max: 30_000, default: 1000 };
export const PROBE_TIMEOUT = { min: 100, max: 30_000, default: 2000 };
export const DRAIN_TIMEOUT = { min: 0, max: 600_000, default: 30_000 };

export interface RolloutSettings {
  /** What the label asks for; null without the label. */
  strategy: "rolling" | "recreate" | null;
  drainMs: number;
  probe: { path: string | null; intervalMs: number; timeoutMs: number };
}

function readMs(service: string, label: string, value: string, b: { min: number; max: number }): number {
  const ms = parseDuration(value);
  if (ms === null || ms < b.min || ms > b.max)
    throw badLabel(service, label, `must be a duration from ${b.min} ms to ${b.max / 1000} s, such as 2s`);
  return ms;
}

/** A service's rollout settings from its labels (defaults for what they leave out); a bad value is a ComposeError. */
export function rolloutSettings(s: Pick<ServiceInfo, "name" | "labels">): RolloutSettings {
  const l = s.labels;
  const strategy = l["sundeck.deploy.strategy"]?.trim().toLowerCase();
  if (strategy !== undefined && strategy !== "rolling" && strategy !== "recreate")
    throw badLabel(s.name, "sundeck.deploy.strategy", "must be rolling or recreate");
  let path: string | null = null;
  if (l["sundeck.healthcheck.path"] !== undefined) {
    path = l["sundeck.healthcheck.path"].trim();
    const problem = pathProblem(path.split("?")[0]!);
    if (problem) throw badLabel(s.name, "sundeck.healthcheck.path", problem);
  }
  const ms = (label: string, b: { min: number; max: number; default: number }) =>
    l[label] === undefined ? b.default : readMs(s.name, label, l[label], b);
  return {
    strategy: (strategy as RolloutSettings["strategy"]) ?? null,
    drainMs: ms("sundeck.deploy.drain_timeout", DRAIN_TIMEOUT),
    probe: {
      path,
      intervalMs: ms("sundeck.healthcheck.interval", PROBE_INTERVAL),
      timeoutMs: ms("sundeck.healthcheck.timeout", PROBE_TIMEOUT),
    },
  };
}

export interface StrategyChoice {
  service: string;
  strategy: "rolling" | "recreate";
  /** Why, in words for the deploy log. */
  reason: string;
}

/**
 * The strategy of one service: `rolling` for a service with endpoints when that is safe (no container_name, no
 * published host port, no network_mode) and the label does not say `recreate`; `recreate` otherwise, with the reason.
 */
export function chooseStrategy(
  s: Pick<ServiceInfo, "name" | "labels" | "ports" | "containerName" | "networkMode">,
  routed: boolean,
): StrategyChoice {
  const label = rolloutSettings(s).strategy;
  const recreate = (reason: string): StrategyChoice => ({ service: s.name, strategy: "recreate", reason });
  if (label === "recreate") return recreate("sundeck.deploy.strategy is recreate");
  if (!routed) return recreate("no endpoints: nothing routes to it, so nothing waits on it");
  if (s.containerName) return recreate("container_name is set: two containers cannot share the name");
  if (s.ports.some((p) => p.published !== "")) return recreate("it publishes a host port: two containers cannot bind it");
  if (s.networkMode) return recreate("network_mode is set: the proxy cannot reach a second replica by its own address");
  return { service: s.name, strategy: "rolling", reason: "it has endpoints: new replicas start beside the old ones" };
}
