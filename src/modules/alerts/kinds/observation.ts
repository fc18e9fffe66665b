/** What a kind's check reports per subject, and the rule as the checks see it. */
import type { AlertKind } from "../../../shared/alerts";

/** A rule ready to evaluate. */
export interface ActiveRule {
  id: number;
  name: string;
  kind: AlertKind;
  /** null: every app (or the host). */
  app: string | null;
  threshold: number;
  /** The rule's duration text, for messages. */
  duration: string;
  durationMs: number;
}

/** One subject (a container, an app, the host, a certificate) as a check saw it now. */
export interface Observation {
  /** Stable name of the subject: `app/container`, `app`, `host`, `app/host name`. */
  subject: string;
  app: string | null;
  /** The condition holds now; null: unknown now (leave the subject's state as it is). */
  breach: boolean | null;
  /**
   * Whether the condition held for the rule's whole duration, for checks that judge the window themselves (metric
   * samples, rates); undefined: the evaluator times it from when the subject became pending.
   */
  sustained?: boolean;
  value: number | null;
  /** Lower-case, useful on its own in a chat message. */
  message: string;
}

/** A check of one kind: the subjects of a rule as they are at `now`. */
export type Check = (rule: ActiveRule, now: number) => Observation[];

/** Round for messages and stored values (one decimal). */
export const round1 = (v: number): number => Math.round(v * 10) / 10;

/** `5m` for messages; `0s` reads as "now". */
export const forText = (rule: ActiveRule): string => (rule.durationMs > 0 ? ` for ${rule.duration}` : "");
