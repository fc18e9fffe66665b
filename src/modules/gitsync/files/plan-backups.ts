/**
 * Planning an app's backup configs. Paired by service, strategy and target (the secret aside): a config whose S3
 * target is not stored already cannot come from the remote, which never holds its secret.
 */
import type { Ctx } from "../../../context";
import type { ConfigInput } from "../../backups/model";
import { checkCadence, checkHooks, checkSchedule, checkTimezone } from "../../backups/model";
import { diffFields, pair } from "./pairing";
import { type ImportPlan, reasonOf } from "./plan-types";
import type { BackupData } from "./schema";
import { type BackupShape, backupKey, backupOfFile, backupShape } from "./shapes";

const FIELDS = ["schedule", "timezone", "retention_count", "retention_days", "pre_hooks", "post_hooks", "enabled"] as const;

const label = (b: BackupShape) => `backup config ${b.service} ${b.strategy} (${b.target.kind})`;

/** The reason the fields are invalid, or null: the checks of the API. */
function invalid(b: BackupShape): string | null {
  let tz: string | null = null;
  if (b.timezone) {
    const t = checkTimezone(b.timezone);
    if (typeof t !== "string") return t.error;
    tz = t;
  }
  if (b.schedule?.trim()) {
    const s = checkSchedule(b.schedule, tz);
    if (typeof s !== "string") return s.error;
    const cadence = checkCadence(b.schedule);
    if (cadence) return cadence.error;
  }
  for (const [name, hooks] of [
    ["pre_hooks", b.pre_hooks],
    ["post_hooks", b.post_hooks],
  ] as const) {
    const h = checkHooks(name, hooks);
    if (!Array.isArray(h)) return h.error;
  }
  return null;
}

/** Add the backup config changes of `slug` to `plan`. */
export function planBackups(ctx: Ctx, plan: ImportPlan, file: string, slug: string, backups: BackupData[]) {
  let stored: Array<{ id: number; shape: BackupShape }>;
  try {
    stored = ctx.backups.configs.list(slug).map((c) => ({ id: c.id, shape: backupShape(c) }));
  } catch (e) {
    plan.refused.push({ file, what: "backup configs", reason: reasonOf(e) });
    return;
  }
  const p = pair(stored, backups.map(backupOfFile), backupKey);
  const ok = (b: BackupShape) => {
    const why = invalid(b);
    if (why) plan.refused.push({ file, what: label(b), reason: why });
    return !why;
  };
  for (const s of p.removed)
    plan.changes.push({ kind: "backup_config", op: "delete", file, slug, id: s.id, summary: `remove ${label(s.shape)}` });
  for (const { stored: s, wanted } of p.changed) {
    if (!ok(wanted)) continue;
    const input: ConfigInput = diffFields(s.shape, wanted, FIELDS);
    plan.changes.push({
      kind: "backup_config",
      op: "update",
      file,
      slug,
      id: s.id,
      input,
      summary: `change ${Object.keys(input).join(", ")} of ${label(s.shape)}`,
    });
  }
  for (const b of p.added) {
    if (b.target.kind !== "local") {
      plan.refused.push({
        file,
        what: label(b),
        reason:
          "an s3 target is never created or re-pointed from the repository (its secret key is not there): set it on this server",
      });
      continue;
    }
    if (!ok(b)) continue;
    const { target: _t, ...rest } = b;
    plan.changes.push({
      kind: "backup_config",
      op: "create",
      file,
      slug,
      input: { ...rest, target: { kind: "local" } },
      summary: `create ${label(b)}`,
    });
  }
}
