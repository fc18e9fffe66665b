/**
 * The git sync configuration in force: the `git_sync` block of the config file, replaced as a whole by what a
 * super-admin stored through the API (one settings row; the token and the webhook secret sealed). Secrets are
 * write-only: views carry the mask when one is set.
 */
import { eq } from "drizzle-orm";
import { type Config, ConfigError, validateConfig } from "../../config/schema";
import type { Db } from "../../db";
import { settings } from "../../db/schema";
import type { Secrets } from "../../lib/crypto";
import { parseDuration } from "../../lib/duration";
import { badRequest } from "../../lib/errors";
import { type Clock, iso } from "../../lib/time";
import { GIT_SECRET_MASK, type GitSyncConfig, type GitSyncConfigView } from "../../shared/git-sync";
import type { GitLimits } from "./repo/limits";

/** The `git_sync` block. */
export type GitSyncSettings = Config["git_sync"];

const KEY = "git_sync";
const SECRET_FIELDS = ["https_token", "webhook_secret"] as const;
/** The poll loop never runs more often than this. */
const MIN_POLL_MS = 5_000;

/** Who holds the values in force. */
export type ConfigSource = "db" | "yaml";

export interface GitSyncConfigStore {
  /** The values in force, secrets in clear (for the worker only). */
  effective(): { config: GitSyncSettings; source: ConfigSource };
  /** What GET /api/git/config answers: secrets masked. */
  view(): GitSyncConfigView;
  /**
   * Validate `body` against the file's schema (a secret omitted or masked keeps the stored one, "" clears it), store
   * it, and return the values before and after.
   */
  put(body: Partial<GitSyncConfig>): { before: GitSyncSettings; after: GitSyncSettings };
}

/** The bounds on what the remote may cost, from the configuration in force. */
export function limitsOf(c: GitSyncSettings): GitLimits {
  return {
    maxPackBytes: c.max_pack_bytes,
    maxObjects: c.max_objects,
    maxBlobBytes: c.max_file_bytes,
    maxObjectBytes: c.max_object_bytes,
    maxTreeEntries: c.max_tree_entries,
    maxTreeDepth: c.max_tree_depth,
    maxPaths: c.max_paths,
    cycleTimeoutMs: parseDuration(c.cycle_timeout) ?? 120_000,
  };
}

/** Mask the secrets of a config (for responses and activity snapshots). */
export function masked(c: GitSyncSettings): GitSyncConfig {
  return {
    ...c,
    https_token: c.https_token ? GIT_SECRET_MASK : "",
    webhook_secret: c.webhook_secret ? GIT_SECRET_MASK : "",
  };
}

/** Build the store over the settings table. */
export function createGitSyncConfig(d: { db: Db; clock: Clock; secrets: Secrets; config: Readonly<Config> }): GitSyncConfigStore {
  const read = (): GitSyncSettings | null => {
    const row = d.db.orm.select().from(settings).where(eq(settings.key, KEY)).get();
    if (!row) return null;
    const stored = JSON.parse(row.value) as GitSyncSettings;
    const out = { ...d.config.git_sync, ...stored };
    for (const f of SECRET_FIELDS) out[f] = stored[f] ? d.secrets.open(stored[f]) : "";
    return out;
  };

  const effective = () => {
    const stored = read();
    return stored ? { config: stored, source: "db" as const } : { config: { ...d.config.git_sync }, source: "yaml" as const };
  };

  return {
    effective,

    view() {
      const e = effective();
      return { ...masked(e.config), source: e.source };
    },

    put(body) {
      const before = effective().config;
      const next: Record<string, unknown> = { ...before };
      for (const [k, v] of Object.entries(body ?? {})) {
        if (k === "source") continue;
        if (!(k in before)) throw badRequest(`unknown field ${k}`);
        if ((SECRET_FIELDS as readonly string[]).includes(k) && (v === undefined || v === GIT_SECRET_MASK)) continue;
        next[k] = v;
      }
      if (typeof next.remote === "string") next.remote = next.remote.trim();
      try {
        validateConfig({ ...d.config, git_sync: next });
      } catch (e) {
        if (e instanceof ConfigError) throw badRequest(`${e.key.replace(/^git_sync\./, "")} ${e.problem}`);
        throw e;
      }
      const after = next as GitSyncSettings;
      if (parseDuration(after.poll_interval)! < MIN_POLL_MS) throw badRequest("poll_interval must be at least 5s");
      const sealed = { ...after };
      for (const f of SECRET_FIELDS) sealed[f] = after[f] ? d.secrets.seal(after[f]) : "";
      const value = JSON.stringify(sealed);
      const now = iso(d.clock.now());
      d.db.orm
        .insert(settings)
        .values({ key: KEY, value, updatedAt: now })
        .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: now } })
        .run();
      return { before, after };
    },
  };
}
