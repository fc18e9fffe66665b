/**
 * What an import would change, computed against the database before anything is touched: alert rules and backup
 * configs to create, update or remove, grants to revoke; and what the remote asked for that is refused (new grants,
 * users and roles, registries and webhooks, S3 targets the repository cannot carry a secret for, invalid entries).
 */
import type { Ctx } from "../../../context";
import type { ConfigInput } from "../../backups/model";
import type { ParsedImport } from "./import-read";
import { GLOBAL_FILE, SIDECAR_FILE } from "./paths";
import { planBackups } from "./plan-backups";
import { planGlobals } from "./plan-globals";
import { planRules } from "./plan-rules";
import type { ImportPlan } from "./plan-types";

export type { Change, ImportPlan, Refusal } from "./plan-types";
export type { ConfigInput };

/**
 * Plan the import of `parsed`. Apps that are not live yet (pulled, not deployed) are `deferred`: import them again
 * once the reconciler has deployed them.
 */
export function planImport(ctx: Ctx, parsed: ParsedImport): ImportPlan {
  const plan: ImportPlan = { changes: [], refused: [], deferred: [] };
  for (const [slug, side] of Object.entries(parsed.apps).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const app = ctx.appRepo.bySlug(slug);
    if (!app || app.removedAt) {
      plan.deferred.push(slug);
      continue;
    }
    const file = `${slug}/${SIDECAR_FILE}`;
    planRules(ctx, plan, file, slug, side.alert_rules);
    planBackups(ctx, plan, file, slug, side.backups);
    planAccess(ctx, plan, file, slug, side.access);
  }
  if (parsed.global) {
    planRules(ctx, plan, GLOBAL_FILE, null, parsed.global.alert_rules);
    planGlobals(ctx, plan, parsed.global);
  }
  return plan;
}

/** Grants: the remote may take access away, never give it (nor name a user or role this server does not have). */
function planAccess(ctx: Ctx, plan: ImportPlan, file: string, slug: string, access: Array<{ username: string; role: string }>) {
  const users = ctx.users.list();
  const wanted = new Set(access.map((a) => a.username));
  for (const u of users) {
    if (u.app_access.includes(slug) && !wanted.has(u.username))
      plan.changes.push({
        kind: "grant",
        op: "revoke",
        file,
        slug,
        userId: u.id,
        username: u.username,
        summary: `revoke ${u.username}'s access to ${slug}`,
      });
  }
  for (const a of access) {
    const u = users.find((x) => x.username === a.username);
    const what = `access of ${a.username}`;
    if (!u) plan.refused.push({ file, what, reason: "no such user: git sync never creates users" });
    else if (!u.app_access.includes(slug))
      plan.refused.push({ file, what, reason: "git sync never grants access: grant it on this server" });
    else if (u.role !== a.role)
      plan.refused.push({ file, what, reason: `git sync never changes roles (the file says ${a.role}, the user is ${u.role})` });
  }
}
