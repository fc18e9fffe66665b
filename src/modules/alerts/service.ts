/**
 * Alert rules and history for callers: a rule of an app is seen by whoever may read the app and changed by whoever
 * may change it (admins, or a manage user with a grant); global rules are admins' only. Changes record activity
 * (category alert, before and after) in their transaction. The evaluator does the watching.
 */

import type { Db } from "../../db";
import { badRequest, forbidden, notFound } from "../../lib/errors";
import { type Clock, iso } from "../../lib/time";
import type { AlertHistoryPage, AlertRule } from "../../shared/alerts";
import type { Principal } from "../../shared/principal";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import { mayMutateApps, seesAllApps } from "../auth/policy";
import type { AlertEvent, Evaluator } from "./evaluator";
import { checkRule, checkTime, type RuleBody, type RuleInput } from "./model";
import type { AlertRepo, HistoryFilter, RuleFields, RuleRow } from "./repo";

export interface AlertsDeps {
  db: Db;
  clock: Clock;
  repo: AlertRepo;
  activity: Activity;
  /** Apps granted to a user (non-admins). */
  grants: (userId: number) => string[];
  /** The id of a live app, or null when there is none of that slug (missing or removed). */
  appId: (slug: string) => number | null;
  evaluator: Evaluator;
}

/**
 * Rules an app (or the global scope) holds at most: each rule is judged on its own at every tick, and a thousand
 * rules of one app were seconds of the event loop every 10 s, the proxy's included.
 */
export const MAX_RULES_PER_SCOPE = 50;

/** Build the service. */
export function createAlerts(d: AlertsDeps) {
  const { repo } = d;
  const canRead = (p: Principal, app: string | null) =>
    seesAllApps(p.user.role) || (app !== null && d.grants(p.user.id).includes(app));
  /** 404 for a scope the caller cannot see (as for a missing app), 403 for one it may only read. */
  const mustWrite = (p: Principal, app: string | null) => {
    if (seesAllApps(p.user.role)) return;
    if (app === null) throw forbidden();
    if (!canRead(p, app)) throw notFound();
    if (!mayMutateApps(p.user.role)) throw forbidden();
  };
  const fieldsOf = (r: RuleRow): RuleFields => ({
    name: r.name,
    app_slug: r.app_slug,
    kind: r.kind,
    threshold: r.threshold,
    duration: r.duration,
    webhook_ids: JSON.parse(r.webhook_ids) as number[],
    enabled: r.enabled === 1,
    repeat_interval: r.repeat_interval,
    silenced_until: r.silenced_until,
  });
  const json = (r: RuleRow): AlertRule => ({
    id: r.id,
    ...fieldsOf(r),
    kind: r.kind as AlertRule["kind"],
    firing: repo
      .states(r.id)
      .filter((s) => s.state === "firing")
      .map((s) => ({ subject: s.subject, since: s.since, value: s.value })),
    created_at: r.created_at,
    updated_at: r.updated_at,
  });
  const snapshot = (r: RuleRow) => ({ id: r.id, ...fieldsOf(r) });
  const visible = (id: number, p: Principal) => {
    const r = repo.rule(id);
    if (!r || !canRead(p, r.app_slug)) throw notFound();
    return r;
  };
  /** The app must exist and the webhooks too; then the rule's own checks. */
  const roomFor = (app: string | null) => {
    if (repo.countRules(app) >= MAX_RULES_PER_SCOPE) {
      throw badRequest(`${app ? `app ${app}` : "the global scope"} has ${MAX_RULES_PER_SCOPE} alert rules, the most it may hold`);
    }
  };
  const validate = (f: RuleFields): RuleFields => {
    const rule = checkRule(f);
    if (rule.app_slug !== null && d.appId(rule.app_slug) === null) throw badRequest(`app_slug: no app named ${rule.app_slug}`);
    const missing = repo.missingWebhooks(rule.webhook_ids);
    if (missing.length) throw badRequest(`webhook_ids: no webhook ${missing.join(", ")}`);
    return rule;
  };
  const record = (actor: Actor, action: string, r: RuleRow, before: RuleRow | null, after: RuleRow | null, what: string) =>
    d.activity.record({
      actor,
      category: "alert",
      action,
      target: r.name,
      appSlug: r.app_slug,
      appId: r.app_slug ? d.appId(r.app_slug) : null,
      summary: `${actor.name} ${what} alert rule ${r.name} (${r.kind} on ${r.app_slug ?? (r.kind === "disk" ? "the host" : "every app")})`,
      before: before ? snapshot(before) : null,
      after: after ? snapshot(after) : null,
    });
  const change = (id: number, p: Principal, actor: Actor, patch: RuleInput, action = "alert_rule_updated", what = "changed") =>
    d.db.tx(() => {
      const before = visible(id, p);
      mustWrite(p, before.app_slug);
      const merged = { ...fieldsOf(before), ...patch };
      if (merged.app_slug !== before.app_slug) mustWrite(p, merged.app_slug);
      const checked = validate(merged);
      if (checked.app_slug !== before.app_slug) roomFor(checked.app_slug);
      const after = repo.updateRule(id, checked, iso(d.clock.now()));
      // a disabled rule is not evaluated: what it had firing ends here rather than lingering in its `firing` list
      if (!after.enabled) repo.dropStates(id);
      record(actor, action, after, before, after, what);
      return json(after);
    });

  return {
    /** Rules the caller may see, oldest first. */
    list: (p: Principal): AlertRule[] =>
      repo
        .rules()
        .filter((r) => canRead(p, r.app_slug))
        .map(json),

    get: (id: number, p: Principal): AlertRule => json(visible(id, p)),

    create(input: typeof RuleBody.static, p: Principal, actor: Actor): AlertRule {
      const f: RuleFields = {
        name: input.name,
        app_slug: input.app_slug ?? null,
        kind: input.kind,
        threshold: input.threshold,
        duration: input.duration,
        webhook_ids: input.webhook_ids ?? [],
        enabled: input.enabled ?? true,
        repeat_interval: input.repeat_interval ?? null,
        silenced_until: input.silenced_until ?? null,
      };
      mustWrite(p, f.app_slug);
      return d.db.tx(() => {
        const checked = validate(f);
        roomFor(checked.app_slug);
        const r = repo.insertRule(checked, iso(d.clock.now()));
        record(actor, "alert_rule_created", r, null, r, "created");
        return json(r);
      });
    },

    /** Replace the fields given; the rest stay as stored. */
    update: (id: number, patch: RuleInput, p: Principal, actor: Actor): AlertRule => change(id, p, actor, patch),

    /** Hold notifications back until `until` (null lifts the silence). */
    silence: (id: number, until: string | null, p: Principal, actor: Actor): AlertRule =>
      change(
        id,
        p,
        actor,
        { silenced_until: checkTime(until, "until") },
        until ? "alert_rule_silenced" : "alert_rule_unsilenced",
        until ? "silenced" : "lifted the silence of",
      ),

    remove(id: number, p: Principal, actor: Actor): void {
      d.db.tx(() => {
        const r = visible(id, p);
        mustWrite(p, r.app_slug);
        repo.deleteRule(id);
        record(actor, "alert_rule_removed", r, r, null, "removed");
      });
    },

    /** One page of history the caller may see, newest first. */
    history(f: Omit<HistoryFilter, "slugs">, p: Principal): AlertHistoryPage {
      const slugs = seesAllApps(p.user.role) ? null : d.grants(p.user.id);
      const rows = repo.history({ ...f, slugs });
      const more = rows.length > f.limit;
      const entries = more ? rows.slice(0, f.limit) : rows;
      return { entries, next_before: more ? entries[entries.length - 1].id : null };
    },

    /** Feed an event (a backup run's outcome) to the matching rules. */
    raise: (e: AlertEvent): void => d.evaluator.raise(e),

    start: () => d.evaluator.start(),
    stop: () => d.evaluator.stop(),
    evaluator: d.evaluator,
  };
}

export type Alerts = ReturnType<typeof createAlerts>;
