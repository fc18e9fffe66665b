/** Planning the alert rules of one scope (an app's sidecar, or the global rules of `_global.yml`). */
import type { Ctx } from "../../../context";
import { checkRule } from "../../alerts/model";
import { SYNC_PRINCIPAL } from "./actor";
import { diffFields, pair } from "./pairing";
import { type ImportPlan, reasonOf } from "./plan-types";
import type { RuleData } from "./schema";
import { type RuleShape, ruleKey, ruleOfFile, ruleShape } from "./shapes";

const FIELDS = ["kind", "threshold", "duration", "enabled", "repeat_interval", "silenced_until"] as const;

/** Add the rule changes of `scope` (null: global) to `plan`. */
export function planRules(ctx: Ctx, plan: ImportPlan, file: string, scope: string | null, rules: RuleData[]) {
  const hooks = ctx.webhooks.list(false);
  const names = new Map(hooks.map((w) => [w.id, w.name]));
  const stored = ctx.alerts
    .list(SYNC_PRINCIPAL)
    .filter((r) => r.app_slug === scope)
    .map((r) => ({ id: r.id, shape: ruleShape(r, (id) => names.get(id)) }));
  const where = scope ?? "the global scope";

  /** The rule's webhook ids and its checked fields, or a refusal (null). */
  const resolve = (r: RuleShape) => {
    const what = `alert rule ${r.name}`;
    const ids: number[] = [];
    for (const n of r.webhooks) {
      const found = hooks.filter((w) => w.name === n);
      if (found.length !== 1) {
        const reason = found.length ? `several webhooks are named ${n}` : `no webhook named ${n}`;
        plan.refused.push({ file, what, reason });
        return null;
      }
      ids.push(found[0].id);
    }
    try {
      checkRule({ ...r, app_slug: scope, webhook_ids: ids });
    } catch (e) {
      plan.refused.push({ file, what, reason: reasonOf(e) });
      return null;
    }
    return ids;
  };

  const p = pair(stored, rules.map(ruleOfFile), ruleKey);
  for (const s of p.removed)
    plan.changes.push({
      kind: "alert_rule",
      op: "delete",
      file,
      scope,
      id: s.id,
      summary: `remove alert rule ${s.shape.name} of ${where}`,
    });
  for (const { stored: s, wanted } of p.changed) {
    const ids = resolve(wanted);
    if (!ids) continue;
    const patch = {
      ...diffFields(s.shape, wanted, FIELDS),
      ...(diffFields(s.shape, wanted, ["webhooks"]).webhooks ? { webhook_ids: ids } : {}),
    };
    plan.changes.push({
      kind: "alert_rule",
      op: "update",
      file,
      scope,
      id: s.id,
      patch,
      summary: `change ${Object.keys(patch).join(", ")} of alert rule ${s.shape.name} of ${where}`,
    });
  }
  for (const r of p.added) {
    const ids = resolve(r);
    if (!ids) continue;
    const { webhooks: _w, ...rest } = r;
    plan.changes.push({
      kind: "alert_rule",
      op: "create",
      file,
      scope,
      body: { ...rest, app_slug: scope, webhook_ids: ids },
      summary: `create alert rule ${r.name} (${r.kind}) of ${where}`,
    });
  }
}
