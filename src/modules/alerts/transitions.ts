/**
 * The state machine of one rule: ok → pending → firing → resolved (ok again), per subject, stored in alert_state so
 * a restart neither forgets a firing alert nor announces it twice. A transition to firing or resolved writes one
 * history row and one notification; while firing, `repeat_interval` notifies again. A silenced rule still records
 * its transitions but sends nothing, and a resolve whose firing was never sent is not sent either.
 */
import { iso } from "../../lib/time";
import type { AlertNotification } from "../../shared/alerts";
import type { ActiveRule, Observation } from "./kinds/observation";
import type { AlertRepo, StateRow } from "./repo";

/** A notification to send once the transaction has committed. */
export interface Outgoing {
  webhookIds: number[];
  notification: AlertNotification;
}

/** The stored settings of a rule that shape notifications. */
export interface NotifySettings {
  webhookIds: number[];
  repeatMs: number | null;
  /** ms since the epoch; null: not silenced. */
  silencedUntil: number | null;
}

/**
 * Apply what a check saw to the rule's states (call inside a transaction). `absentResolves`: subjects with a state
 * that the check no longer reports (a container gone, an app removed) resolve; event kinds pass false.
 */
export function applyObservations(
  repo: AlertRepo,
  rule: ActiveRule,
  settings: NotifySettings,
  observations: Observation[],
  now: number,
  absentResolves: boolean,
): Outgoing[] {
  const out: Outgoing[] = [];
  const states = new Map(repo.states(rule.id).map((s) => [s.subject, s]));
  const silenced = settings.silencedUntil !== null && now < settings.silencedUntil;
  const at = iso(now);

  const send = (state: "firing" | "resolved", o: Pick<Observation, "app" | "value" | "message">) => {
    if (settings.webhookIds.length === 0) return;
    out.push({
      webhookIds: settings.webhookIds,
      notification: {
        event: `alert.${state}`,
        rule: { id: rule.id, name: rule.name, kind: rule.kind, threshold: rule.threshold, duration: rule.duration },
        app_slug: o.app,
        state,
        value: o.value,
        message: o.message,
        created_at: at,
      },
    });
  };
  const history = (state: "firing" | "resolved", subject: string, o: Pick<Observation, "app" | "value" | "message">) =>
    repo.addHistory({
      rule_id: rule.id,
      app_slug: o.app,
      kind: rule.kind,
      subject,
      state,
      value: o.value,
      message: o.message,
      created_at: at,
    });

  const fire = (o: Observation) => {
    history("firing", o.subject, o);
    if (!silenced) send("firing", o);
    repo.putState({
      rule_id: rule.id,
      subject: o.subject,
      state: "firing",
      since: at,
      value: o.value,
      last_notified_at: silenced ? null : at,
    });
  };
  const resolve = (st: StateRow, o: Pick<Observation, "app" | "value" | "message">) => {
    history("resolved", st.subject, o);
    if (!silenced && st.last_notified_at !== null) send("resolved", o);
    repo.dropState(rule.id, st.subject);
  };
  /** Still firing: tell once the silence is over if it never was, and again every repeat interval. */
  const keepFiring = (st: StateRow, o: Observation) => {
    let notified = st.last_notified_at;
    if (!silenced) {
      const due = notified === null || (settings.repeatMs !== null && now - Date.parse(notified) >= settings.repeatMs);
      if (due) {
        send("firing", o);
        notified = at;
      }
    }
    repo.putState({ ...st, value: o.value, last_notified_at: notified });
  };

  for (const o of observations) {
    const st = states.get(o.subject);
    states.delete(o.subject);
    if (o.breach === null) continue;
    if (!o.breach) {
      if (st?.state === "firing") resolve(st, o);
      else if (st) repo.dropState(rule.id, o.subject);
      continue;
    }
    if (st?.state === "firing") {
      keepFiring(st, o);
      continue;
    }
    const held = o.sustained ?? (st ? now - Date.parse(st.since) >= rule.durationMs : rule.durationMs === 0);
    if (held) fire(o);
    else
      repo.putState({
        rule_id: rule.id,
        subject: o.subject,
        state: "pending",
        since: st?.since ?? at,
        value: o.value,
        last_notified_at: null,
      });
  }

  if (absentResolves) {
    for (const st of states.values()) {
      if (st.state !== "firing") {
        repo.dropState(rule.id, st.subject);
        continue;
      }
      const app = rule.kind === "disk" ? null : st.subject.split("/")[0];
      resolve(st, { app, value: null, message: `${rule.kind} alert of ${st.subject} resolved: no longer observed` });
    }
  }
  return out;
}
