/**
 * Batteries of a template deploy: a daily backup config of the template's database and an `app_down` alert rule,
 * made through the backups and alerts services (normal configs afterwards, audited with the deploy's actor). What can
 * be checked is checked before the deploy is submitted; what needs the app row is made once the deploy is accepted.
 */
import { badRequest, HttpError } from "../../lib/errors";
import type { Log } from "../../log/logger";
import type { Principal } from "../../shared/principal";
import {
  ALERT_DURATION,
  BACKUP_KEEP,
  BACKUP_SCHEDULE,
  type TemplateBatteries,
  type TemplateBatteriesMade,
  type TemplateBatteryPlan,
} from "../../shared/templates";
import type { Actor } from "../activity/model";
import { checkRule } from "../alerts/model";
import type { Alerts } from "../alerts/service";
import type { Backups } from "../backups/service";
import type { Template } from "./catalog";

/** The configs a body's `batteries` ask for; 400 for a backup of a template with no database. */
export function planBatteries(t: Template, slug: string, asked: TemplateBatteries | undefined): TemplateBatteryPlan | null {
  if (!asked || (!asked.backup && !asked.alert)) return null;
  const plan: TemplateBatteryPlan = {};
  if (asked.backup) {
    if (!t.database)
      throw badRequest(
        `batteries.backup: template ${t.id} has no database to back up (back up its volumes from the Backups tab)`,
      );
    plan.backup = {
      strategy: t.database.strategy,
      service: t.database.service,
      target: { kind: "local" },
      schedule: BACKUP_SCHEDULE,
      retention_count: BACKUP_KEEP,
    };
  }
  if (asked.alert) {
    plan.alert = {
      name: `${slug} down`,
      app_slug: slug,
      kind: "app_down",
      threshold: 0,
      duration: ALERT_DURATION,
      webhook_ids: [],
    };
    // the rule's own checks, before anything is deployed (the app's existence is the one left for later)
    checkRule({ ...plan.alert, enabled: true, repeat_interval: null, silenced_until: null });
  }
  return plan;
}

/** 400 when the compose file to deploy lost the service the backup reads (a reviewed text may drop it). */
export function checkBatteryServices(plan: TemplateBatteryPlan | null, services: readonly string[]): void {
  const svc = plan?.backup?.service;
  if (svc !== undefined && !services.includes(svc))
    throw badRequest(`batteries.backup: the compose file has no service ${svc} (the template's database) to back up`);
}

export interface BatteryDeps {
  backups: Pick<Backups, "configs">;
  alerts: Pick<Alerts, "create">;
  log: Log;
}

/**
 * Make the planned configs of an accepted deploy. One that fails does not undo the deploy: its reason is in `failed`
 * (the client says what was not made) and in the process log.
 */
export function makeBatteries(
  d: BatteryDeps,
  slug: string,
  plan: TemplateBatteryPlan,
  principal: Principal,
  actor: Actor,
): TemplateBatteriesMade {
  const out: TemplateBatteriesMade = {};
  const failed: string[] = [];
  const attempt = (what: string, make: () => void) => {
    try {
      make();
    } catch (e) {
      const reason = e instanceof HttpError && e.reason ? e.reason : "it could not be created";
      d.log.warn("template battery not made", { app: slug, battery: what, error: (e as Error).message });
      failed.push(`${what}: ${reason}`);
    }
  };
  const admin = principal.user.role === "super_admin" || principal.user.role === "admin";
  if (plan.backup) {
    const b = plan.backup;
    attempt("backup", () => {
      out.backup_config_id = d.backups.configs.create(slug, { ...b }, actor, { admin }).id;
    });
  }
  if (plan.alert) {
    const a = plan.alert;
    attempt("alert", () => {
      out.alert_rule_id = d.alerts.create({ ...a, webhook_ids: [...a.webhook_ids], enabled: true }, principal, actor).id;
    });
  }
  if (failed.length) out.failed = failed;
  return out;
}
