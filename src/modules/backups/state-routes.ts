/**
 * Routes of Sundeck's own state backups, for super-admins: `/api/system/backups/configs` (list, add) and
 * `/api/system/backups/runs`. A state config is a `backup_configs` row with app_slug null and strategy `state`, so
 * once made it is changed, removed and run now through the same `/api/backups/configs/{id}` routes as any config,
 * its runs are made by the same runner (a VACUUM INTO snapshot, gzipped, hashed, stored), its schedule armed by
 * the same scheduler, its archives downloaded through `/api/backups/runs/{id}/download`.
 */
import { desc, isNull } from "drizzle-orm";
import { Elysia, t } from "elysia";
import type { Ctx } from "../../context";
import { backupConfigs, backupRuns } from "../../db/schema";
import { withStatus } from "../../http/respond";
import { badRequest } from "../../lib/errors";
import { iso } from "../../lib/time";
import type { BackupConfig, BackupRun } from "../../shared/backups";
import type { Actor } from "../activity/model";
import { authPlugin } from "../auth/macro";
import { ConfigBody, checkCadence, checkSchedule, checkTarget, checkTimezone, ListQuery, TargetBody } from "./model";
import { STATE_STRATEGY } from "./state";

const p = ConfigBody.properties;

/** POST /api/system/backups/configs: a target, and optionally a schedule, retention and enabled. */
export const StateConfigBody = t.Object({
  strategy: t.Optional(t.Literal(STATE_STRATEGY, { error: "strategy must be state" })),
  target: TargetBody,
  schedule: p.schedule,
  timezone: p.timezone,
  retention_count: p.retention_count,
  retention_days: p.retention_days,
  enabled: p.enabled,
});
export type StateConfigInput = typeof StateConfigBody.static;

const valid = <T>(v: T | { error: string }): T => {
  if (v && typeof v === "object" && "error" in v) throw badRequest(v.error);
  return v as T;
};

/**
 * Add a state config: checked like an app's (target by the targets' rules, croner schedule, IANA zone), stored with
 * its S3 secret sealed, recorded as an activity entry (category backup). A schedule is set through the configs
 * service's update, which arms it in the running scheduler like any config's.
 */
export function createStateConfig(ctx: Ctx, input: StateConfigInput, actor: Actor): BackupConfig {
  const cadence = checkCadence(input.schedule);
  if (cadence) throw badRequest(cadence.error);
  const tz = input.timezone ? valid(checkTimezone(input.timezone)) : null;
  const schedule = input.schedule?.trim() ? valid(checkSchedule(input.schedule, tz)) : null;
  const secret = input.target.kind === "s3" ? input.target.secret_key || null : null;
  const { kind, ...spec } = checkTarget(input.target, secret);
  const now = iso(ctx.clock.now());
  const row = ctx.db.tx(() => {
    const r = ctx.db.orm
      .insert(backupConfigs)
      .values({
        appSlug: null,
        strategy: STATE_STRATEGY,
        service: null,
        targetKind: kind,
        targetJson: JSON.stringify(kind === "local" ? {} : spec),
        secretEnc: kind === "s3" && secret ? ctx.secrets.seal(secret) : null,
        schedule: null,
        timezone: tz,
        retentionCount: input.retention_count ?? null,
        retentionDays: input.retention_days ?? null,
        preHooks: "[]",
        postHooks: "[]",
        enabled: input.enabled ?? true,
        lastScheduledAt: now,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
    const after = ctx.backups.configs.json(r);
    const { next_run_at: _n, created_at: _c, updated_at: _u, ...snapshot } = after;
    ctx.activity.record({
      actor,
      category: "backup",
      action: "config_created",
      target: "sundeck state",
      appSlug: null,
      summary: `${actor.name} created backup config ${r.id} (sundeck state, ${kind})`,
      before: null,
      after: snapshot,
    });
    return r;
  });
  if (schedule) return ctx.backups.configs.update(row.id, { schedule, timezone: tz }, actor);
  return ctx.backups.configs.json(row);
}

/** The state configs, oldest first. */
export function stateConfigs(ctx: Ctx): BackupConfig[] {
  return ctx.db.orm
    .select()
    .from(backupConfigs)
    .where(isNull(backupConfigs.appSlug))
    .orderBy(backupConfigs.id)
    .all()
    .map((r) => ctx.backups.configs.json(r));
}

/** Runs of the state configs, newest first. */
export function stateRuns(ctx: Ctx, limit: number): BackupRun[] {
  return ctx.db.orm
    .select()
    .from(backupRuns)
    .where(isNull(backupRuns.appSlug))
    .orderBy(desc(backupRuns.id))
    .limit(limit)
    .all()
    .map((r) => ({
      id: r.id,
      config_id: r.configId,
      strategy: r.strategy,
      service: r.service,
      status: r.status as BackupRun["status"],
      trigger: r.trigger as BackupRun["trigger"],
      size_bytes: r.sizeBytes,
      sha256: r.sha256,
      // the runner's live byte count is not reachable from here; a state snapshot takes seconds
      progress_bytes: null,
      target_kind: r.targetKind === "s3" ? "s3" : "local",
      started_at: r.startedAt,
      finished_at: r.finishedAt,
      error: r.error,
    }));
}

function limitOf(text: string | undefined): number {
  if (text === undefined || text === "") return 50;
  if (!/^\d{1,6}$/.test(text) || Number(text) < 1) throw badRequest("limit must be a positive whole number");
  return Math.min(Number(text), 500);
}

/** /api/system/backups/* */
export function stateBackupRoutes(ctx: Ctx) {
  const tags = ["backups"];
  return new Elysia({ name: "state-backup-routes", prefix: "/api/system/backups" })
    .use(authPlugin(ctx))
    .get("/configs", () => stateConfigs(ctx), {
      auth: { role: "super_admin" },
      detail: { tags, summary: "Backup configs of Sundeck's own database (S3 secret keys masked)" },
    })
    .post("/configs", ({ body, actor, set }) => withStatus(set, 201, createStateConfig(ctx, body, actor)), {
      auth: { role: "super_admin" },
      body: StateConfigBody,
      detail: {
        tags,
        summary: "Add a backup config of Sundeck's own database (a consistent snapshot; restore with sundeck restore-state)",
      },
    })
    .get("/runs", ({ query }) => stateRuns(ctx, limitOf(query.limit)), {
      auth: { role: "super_admin" },
      query: ListQuery,
      detail: { tags, summary: "Runs of Sundeck's own state backups, newest first" },
    });
}
