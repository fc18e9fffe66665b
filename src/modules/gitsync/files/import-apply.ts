/**
 * Applying an import plan through the services the API uses, so each change checks what the API checks and writes
 * its activity entry, here with actor_source `git_sync`. Removals go first (room for new rules under the cap), then
 * updates, creations and revoked grants; a change that fails is reported and the others still apply.
 */
import type { Ctx } from "../../../context";
import type { Actor } from "../../activity/model";
import { SYNC_PRINCIPAL } from "./actor";
import { type Change, type ImportPlan, reasonOf } from "./plan-types";

export interface ImportResult {
  applied: Change[];
  failed: Array<{ change: Change; error: string }>;
}

const ORDER: Record<string, number> = { delete: 0, update: 1, create: 2, revoke: 3 };

function applyOne(ctx: Ctx, c: Change, actor: Actor): void {
  switch (c.kind) {
    case "alert_rule":
      if (c.op === "delete") ctx.alerts.remove(c.id, SYNC_PRINCIPAL, actor);
      else if (c.op === "update") ctx.alerts.update(c.id, c.patch, SYNC_PRINCIPAL, actor);
      else ctx.alerts.create(c.body, SYNC_PRINCIPAL, actor);
      return;
    case "backup_config":
      if (c.op === "delete") ctx.backups.configs.remove(c.id, actor);
      else if (c.op === "update") ctx.backups.configs.update(c.id, c.input, actor);
      else ctx.backups.configs.create(c.slug, c.input, actor);
      return;
    case "grant":
      ctx.users.revoke(c.userId, c.slug, actor);
      return;
  }
}

/** Apply `plan` as `actor` (its source is always recorded as `git_sync`). */
export function applyImport(ctx: Ctx, plan: ImportPlan, actor: Actor): ImportResult {
  const as: Actor = { ...actor, source: "git_sync" };
  const out: ImportResult = { applied: [], failed: [] };
  const changes = plan.changes.map((c, i) => ({ c, i })).sort((a, b) => ORDER[a.c.op] - ORDER[b.c.op] || a.i - b.i);
  for (const { c } of changes) {
    try {
      applyOne(ctx, c, as);
      out.applied.push(c);
    } catch (e) {
      out.failed.push({ change: c, error: reasonOf(e) });
    }
  }
  if (out.applied.length || out.failed.length)
    ctx.logs
      .logger("gitsync")
      .info("git sync import applied", { applied: out.applied.length, failed: out.failed.length, by: as.name });
  return out;
}
