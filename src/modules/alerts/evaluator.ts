/**
 * The alert evaluator: after each metrics tick it judges cpu, memory and disk rules on the stored raw samples; on
 * its own timer the rest (app down, 5xx rate, certificate expiry); backup failures arrive through `raise`. Every
 * rule's transitions commit in one transaction and their notifications go out after it.
 */
import type { Db } from "../../db";
import { parseDuration } from "../../lib/duration";
import type { Clock } from "../../lib/time";
import type { Log } from "../../log/logger";
import type { AlertKind } from "../../shared/alerts";
import type { MetricsReader } from "../metrics/samples";
import { appDownCheck } from "./kinds/app-down";
import { certExpiryCheck } from "./kinds/cert-expiry";
import { http5xxCheck } from "./kinds/http-5xx";
import type { ActiveRule, Check, Observation } from "./kinds/observation";
import { usageChecks } from "./kinds/usage";
import type { AlertRepo, RuleRow } from "./repo";
import type { AppsSource, CertSource, Notifier, RequestSource } from "./sources";
import { applyObservations, type Outgoing } from "./transitions";

/** Kinds judged on metric samples, after each tick. */
const METRIC_KINDS: ReadonlySet<string> = new Set(["cpu", "memory", "disk"]);
/** Kinds judged on the evaluator's timer. */
const TIMER_KINDS: ReadonlySet<string> = new Set(["app_down", "http_5xx", "cert_expiry"]);
const EVERY_MS = 15_000;

/** A backup outcome (the backups work raises one per run): a failure fires at once, a success resolves. */
export interface AlertEvent {
  kind: "backup_failed";
  /** Null for Sundeck's own state: only global rules match it. */
  app_slug: string | null;
  message: string;
  /** true: the thing works again (resolves a firing alert). */
  ok?: boolean;
  /** Default: the app slug; e.g. a backup config's name when an app has several. */
  subject?: string;
}

export interface EvaluatorDeps {
  db: Db;
  repo: AlertRepo;
  clock: Clock;
  log: Log;
  /** Null until metrics are collected: cpu, memory and disk rules then stay quiet. */
  reader: MetricsReader | null;
  notifier: Notifier;
  apps: AppsSource;
  requests: RequestSource;
  certs: CertSource;
  /** How often the timer kinds run (default 15 s). */
  everyMs?: number;
}

/** The rule as the checks see it. */
export function activeRule(r: RuleRow): ActiveRule {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind as AlertKind,
    app: r.app_slug,
    threshold: r.threshold,
    duration: r.duration,
    durationMs: parseDuration(r.duration) ?? 0,
  };
}

/** Build the evaluator. */
export function createEvaluator(d: EvaluatorDeps) {
  const checks: Partial<Record<AlertKind, Check>> = {
    app_down: appDownCheck(d.apps, d.reader),
    http_5xx: http5xxCheck(d.apps, d.requests),
    cert_expiry: certExpiryCheck(d.certs),
    ...(d.reader ? usageChecks(d.reader) : {}),
  };
  let timer: ReturnType<typeof setInterval> | undefined;
  let unsubscribe: (() => void) | undefined;

  const settingsOf = (r: RuleRow) => {
    let webhookIds: number[] = [];
    try {
      webhookIds = JSON.parse(r.webhook_ids) as number[];
    } catch {
      // a hand-edited row: notify nobody rather than fail the rule
    }
    return {
      webhookIds,
      repeatMs: r.repeat_interval ? parseDuration(r.repeat_interval) : null,
      silencedUntil: r.silenced_until ? Date.parse(r.silenced_until) : null,
    };
  };

  const deliver = (out: Outgoing[]) => {
    for (const o of out) {
      try {
        d.notifier.notify(o.webhookIds, o.notification);
      } catch (e) {
        d.log.error("alert notification failed", { rule: o.notification.rule?.id, error: (e as Error).message });
      }
    }
  };

  /** Judge one rule on what its check sees now. */
  const judge = (r: RuleRow, observe: () => Observation[], now: number, absentResolves: boolean) => {
    try {
      const rule = activeRule(r);
      const obs = observe();
      const out = d.db.tx(() => applyObservations(d.repo, rule, settingsOf(r), obs, now, absentResolves));
      deliver(out);
    } catch (e) {
      d.log.error("alert rule evaluation failed", { rule: r.id, kind: r.kind, error: (e as Error).message });
    }
  };

  /** Evaluate the enabled rules of the given kinds at `now`. */
  const evaluate = (kinds: ReadonlySet<string>, now = d.clock.now()) => {
    for (const r of d.repo.rules()) {
      if (!r.enabled || !kinds.has(r.kind)) continue;
      const check = checks[r.kind as AlertKind];
      if (!check) continue;
      judge(r, () => check(activeRule(r), now), now, true);
    }
  };

  return {
    /** Judge cpu, memory and disk rules (after a metrics tick at `now`). */
    evaluateMetrics: (now?: number) => evaluate(METRIC_KINDS, now),
    /** Judge app_down, http_5xx and cert_expiry rules. */
    evaluateTimed: (now?: number) => evaluate(TIMER_KINDS, now),

    /** Feed an event to the matching enabled rules (every rule of its kind that is global or for its app). */
    raise(e: AlertEvent): void {
      const now = d.clock.now();
      const o: Observation = {
        subject: e.subject ?? e.app_slug ?? "sundeck",
        app: e.app_slug,
        breach: !e.ok,
        sustained: !e.ok,
        value: null,
        message: e.message,
      };
      for (const r of d.repo.rules()) {
        if (!r.enabled || r.kind !== e.kind || (r.app_slug !== null && r.app_slug !== e.app_slug)) continue;
        judge(r, () => [o], now, false);
      }
    },

    /** Follow metrics ticks and run the timer kinds every `everyMs`. */
    start(): void {
      if (timer) return;
      unsubscribe = d.reader?.onTick((tick) => evaluate(METRIC_KINDS, tick.t));
      timer = setInterval(() => evaluate(TIMER_KINDS), d.everyMs ?? EVERY_MS);
      timer.unref?.();
    },

    stop(): void {
      clearInterval(timer);
      timer = undefined;
      unsubscribe?.();
      unsubscribe = undefined;
    },
  };
}

export type Evaluator = ReturnType<typeof createEvaluator>;
