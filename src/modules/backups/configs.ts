/**
 * Backup configs of an app: create, change, remove, each an activity entry (category `backup`) with before and after.
 * The S3 secret key is sealed at rest and write-only: responses carry `""` or the mask, a PUT that omits it or sends
 * the mask keeps the stored one, and snapshots never hold it.
 */
import { badRequest, conflict, forbidden, notFound } from "../../lib/errors";
import { iso } from "../../lib/time";
import type { BackupConfig, BackupStrategy, BackupTarget } from "../../shared/backups";
import { SECRET_MASK } from "../../shared/webhooks";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import { type BackupDeps, specOf } from "./deps";
import { hooksOf } from "./hooks";
import { type ConfigInput, checkHooks, checkSchedule, checkTarget, checkTimezone } from "./model";
import type { ConfigRow, NewConfig } from "./repo";
import { s3Origin } from "./targets/s3-config";

/** Configs one app may have: each may run every minute, and all of them at once. */
export const MAX_CONFIGS = 50;

/**
 * Who writes a config. `admin`: an admin or super-admin (or the server itself) may point a target at any S3
 * endpoint the address policy lets through; a manage user only at one an admin already set for the app.
 */
export interface Writer {
  admin: boolean;
}

/** Where an S3 target's requests go (its origin), or null for local. */
export function destination(kind: string, json: string): string | null {
  if (kind !== "s3") return null;
  const s = specOf(kind, json);
  if (!s.endpoint) return null;
  return s3Origin({ endpoint: s.endpoint, bucket: s.bucket ?? "", pathStyle: s.path_style ?? true });
}

const valid = <T>(v: T | { error: string }): T => {
  if (v && typeof v === "object" && "error" in v) throw badRequest(v.error);
  return v as T;
};

/** The wire target: the secret masked. */
export function targetJson(r: Pick<ConfigRow, "targetKind" | "targetJson" | "secretEnc">): BackupTarget {
  const s = specOf(r.targetKind, r.targetJson);
  if (s.kind === "local") return { kind: "local" };
  return {
    kind: "s3",
    endpoint: s.endpoint ?? "",
    bucket: s.bucket ?? "",
    prefix: s.prefix ?? "",
    region: s.region ?? "",
    access_key: s.access_key ?? "",
    secret_key: r.secretEnc ? SECRET_MASK : "",
    path_style: s.path_style ?? true,
  };
}

export interface ConfigDeps extends BackupDeps {
  activity: Activity;
  /** The next due time of a config (RFC 3339) or null. */
  nextRunAt(r: ConfigRow): string | null;
  /** A config was created, changed or removed: re-arm its schedule. */
  changed(id: number): void;
}

/** Build the config operations. */
export function createConfigs(d: ConfigDeps) {
  const json = (r: ConfigRow): BackupConfig => ({
    id: r.id,
    app_slug: r.appSlug ?? "",
    strategy: r.strategy as BackupStrategy,
    service: r.service ?? "",
    target: targetJson(r),
    schedule: r.schedule,
    timezone: r.timezone,
    retention_count: r.retentionCount,
    retention_days: r.retentionDays,
    pre_hooks: hooksOf(r.preHooks),
    post_hooks: hooksOf(r.postHooks),
    enabled: r.enabled,
    next_run_at: d.nextRunAt(r),
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  });
  // the target's secret_key is the mask or "" in json(): the recorder's redaction never sees the secret itself
  const snapshot = (r: ConfigRow) => {
    const { next_run_at: _n, created_at: _c, updated_at: _u, ...rest } = json(r);
    return rest;
  };
  const record = (actor: Actor, action: string, r: ConfigRow, before: ConfigRow | null, after: ConfigRow | null) =>
    d.activity.record({
      actor,
      category: "backup",
      action,
      target: r.appSlug === null ? "sundeck state" : `${r.service} ${r.strategy}`,
      appSlug: r.appSlug,
      summary: `${actor.name} ${action.replace("config_", "")} backup config ${r.id} (${r.service ?? "sundeck"}, ${r.strategy}, ${r.targetKind})`,
      before: before ? snapshot(before) : null,
      after: after ? snapshot(after) : null,
    });

  /** The fields a request sets, checked against the app and what is stored. */
  const fields = (slug: string, input: ConfigInput, prev: ConfigRow | null, who: Writer): Partial<NewConfig> => {
    const out: Partial<NewConfig> = {};
    // a state config (Sundeck's own database) has no service, strategy of its own, or container to run hooks in
    if (prev !== null && prev.appSlug === null) {
      const sent = [
        input.strategy !== undefined && "strategy",
        input.service !== undefined && "service",
        input.pre_hooks?.length && "pre_hooks",
        input.post_hooks?.length && "post_hooks",
      ].filter(Boolean);
      if (sent.length) throw badRequest(`a sundeck state config takes no ${sent.join(", ")}`);
    }
    if (input.service !== undefined) {
      const services = d.services(slug);
      if (services === null) throw notFound();
      if (!services.includes(input.service)) throw badRequest(`service: the app has no service ${input.service}`);
      out.service = input.service;
    }
    if (input.strategy !== undefined) out.strategy = input.strategy;
    if (input.target !== undefined) {
      const sent = input.target.secret_key;
      const keep = sent === undefined || sent === SECRET_MASK;
      const stored = keep && prev?.secretEnc && prev.targetKind === "s3" ? opened(prev.secretEnc) : null;
      const secret = keep ? stored : sent || null;
      const spec = checkTarget(input.target, secret);
      const { kind, ...rest } = spec;
      const json = JSON.stringify(kind === "local" ? {} : rest);
      const dest = destination(kind, json);
      const before = prev ? destination(prev.targetKind, prev.targetJson) : null;
      // Bun.S3Client follows redirects and cannot be pinned to a checked address, so a new endpoint is an admin's
      // choice (as webhook and registry destinations are); a manage user reuses one an admin set for the app
      if (dest !== null && dest !== before && !who.admin) {
        const known = d.repo.configs(slug).some((c) => destination(c.targetKind, c.targetJson) === dest);
        if (!known) throw forbidden();
      }
      // a stored secret is used only where it was stored for: a changed endpoint, bucket or key id needs it again
      if (dest !== null && keep && stored !== null && prev) {
        const was = specOf(prev.targetKind, prev.targetJson);
        if (dest !== before || rest.bucket !== was.bucket || rest.access_key !== was.access_key)
          throw badRequest("target.secret_key must be sent again when the s3 endpoint, bucket or access key changes");
      }
      out.targetKind = kind;
      out.targetJson = json;
      out.secretEnc = kind === "s3" && secret ? d.secrets.seal(secret) : null;
    }
    const tz =
      input.timezone === undefined ? (prev?.timezone ?? null) : input.timezone ? valid(checkTimezone(input.timezone)) : null;
    if (input.timezone !== undefined) out.timezone = tz;
    if (input.schedule !== undefined || input.timezone !== undefined) {
      const raw = input.schedule === undefined ? (prev?.schedule ?? null) : input.schedule;
      out.schedule = raw?.trim() ? valid(checkSchedule(raw, tz)) : null;
      // a new schedule counts from now: nothing before it was missed
      out.lastScheduledAt = iso(d.clock.now());
    }
    if (input.retention_count !== undefined) out.retentionCount = input.retention_count;
    if (input.retention_days !== undefined) out.retentionDays = input.retention_days;
    if (input.pre_hooks !== undefined) out.preHooks = JSON.stringify(valid(checkHooks("pre_hooks", input.pre_hooks)));
    if (input.post_hooks !== undefined) out.postHooks = JSON.stringify(valid(checkHooks("post_hooks", input.post_hooks)));
    if (input.enabled !== undefined) out.enabled = input.enabled;
    return out;
  };

  /** A stored secret opened; one sealed under another master_secret is a 400 asking for it again. */
  const opened = (sealed: string) => {
    try {
      return d.secrets.open(sealed);
    } catch {
      throw badRequest("the stored target.secret_key cannot be opened (master_secret changed?): send it again");
    }
  };

  const exists = (id: number) => {
    const r = d.repo.config(id);
    if (!r) throw notFound();
    return r;
  };

  return {
    json,

    /** The config row, or 404. */
    row: exists,

    /** An app's configs, oldest first. */
    list: (slug: string) => d.repo.configs(slug).map(json),

    create(slug: string, input: ConfigInput, actor: Actor, who: Writer = { admin: true }): BackupConfig {
      if (input.strategy === undefined) throw badRequest("strategy is required");
      if (input.service === undefined) throw badRequest("service is required");
      if (input.target === undefined) throw badRequest("target is required");
      if (d.repo.configs(slug).length >= MAX_CONFIGS) throw conflict(`an app has at most ${MAX_CONFIGS} backup configs`);
      const f = fields(slug, input, null, who);
      const now = iso(d.clock.now());
      const r = d.db.tx(() => {
        const row = d.repo.insertConfig({
          appSlug: slug,
          strategy: f.strategy!,
          service: f.service!,
          targetKind: f.targetKind!,
          targetJson: f.targetJson!,
          secretEnc: f.secretEnc ?? null,
          schedule: f.schedule ?? null,
          timezone: f.timezone ?? null,
          retentionCount: f.retentionCount ?? null,
          retentionDays: f.retentionDays ?? null,
          preHooks: f.preHooks ?? "[]",
          postHooks: f.postHooks ?? "[]",
          enabled: f.enabled ?? true,
          lastScheduledAt: now,
          createdAt: now,
          updatedAt: now,
        });
        record(actor, "config_created", row, null, row);
        return row;
      });
      d.changed(r.id);
      return json(r);
    },

    /** Change the fields given; the target's secret omitted or masked keeps the stored one. */
    update(id: number, input: ConfigInput, actor: Actor, who: Writer = { admin: true }): BackupConfig {
      const before = exists(id);
      const f = fields(before.appSlug ?? "", input, before, who);
      const r = d.db.tx(() => {
        const row = d.repo.updateConfig(id, { ...f, updatedAt: iso(d.clock.now()) });
        record(actor, "config_updated", row, before, row);
        return row;
      });
      d.changed(id);
      return json(r);
    },

    /** Remove a config; its runs stay (config_id set null) until removed with their archives. */
    remove(id: number, actor: Actor): void {
      const r = exists(id);
      d.db.tx(() => {
        d.repo.removeConfig(id);
        record(actor, "config_removed", r, r, null);
      });
      d.changed(id);
    },
  };
}

/** The config operations' type. */
export type Configs = ReturnType<typeof createConfigs>;
