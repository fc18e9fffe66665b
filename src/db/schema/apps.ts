/** Apps, their compose versions, the deploy journal, and registry credentials. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { DeployStatus } from "../../shared/deploys";

export const apps = sqliteTable("apps", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  slug: text("slug").notNull().unique(),
  /** Desired: the user stopped the app (the reconciler must not start it). */
  stopped: integer("stopped", { mode: "boolean" }).notNull().default(false),
  /** Desired replicas per service, JSON `{service: count}`. */
  scaleJson: text("scale_json").notNull().default("{}"),
  /** The version running and known good. */
  currentVersionId: integer("current_version_id"),
  /** The version last tried (good or not): the reconciler does not retry the same content. */
  attemptedVersionId: integer("attempted_version_id"),
  lastDeployStatus: text("last_deploy_status"),
  lastError: text("last_error"),
  /** Set when the app's directory went away and its containers were taken down (volumes kept). */
  removedAt: text("removed_at"),
  /** The catalog template the app was made from, JSON `{id, version}`; null for an app made otherwise. */
  templateJson: text("template_json"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const composeVersions = sqliteTable(
  "compose_versions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    appId: integer("app_id")
      .notNull()
      .references(() => apps.id, { onDelete: "cascade" }),
    /** 1, 2, 3... per app. */
    version: integer("version").notNull(),
    /** sha256 of compose and .env: identical content is one version. */
    hash: text("hash").notNull(),
    compose: text("compose").notNull(),
    /** The .env text, sealed with AES-256-GCM (it holds secrets). */
    envSealed: text("env_sealed").notNull(),
    source: text("source").notNull(),
    createdBy: text("created_by").notNull(),
    /** good (deployed and stable), failed, or null (never finished a deploy). */
    status: text("status"),
    createdAt: text("created_at").notNull(),
    /**
     * The version's routing settings (its labels, endpoints included) as JSON, stored when a deploy checked it, so
     * the proxy's first route table at start reads rows instead of re-checking every app; null in rows from before.
     */
    routing: text("routing"),
    /**
     * What an app's page shows of the version's services (name, image, declared replicas, published ports,
     * scalability) as JSON, stored with the routing, so a view reads a row instead of parsing the compose file;
     * null in rows from before.
     */
    services: text("services"),
  },
  (t) => [
    uniqueIndex("compose_versions_app_hash").on(t.appId, t.hash),
    uniqueIndex("compose_versions_app_version").on(t.appId, t.version),
  ],
);

export const deploys = sqliteTable(
  "deploys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    appId: integer("app_id")
      .notNull()
      .references(() => apps.id, { onDelete: "cascade" }),
    versionId: integer("version_id"),
    /** up, pull, rollback, start, stop, restart, scale, down */
    action: text("action").notNull(),
    status: text("status").$type<DeployStatus>().notNull(),
    error: text("error"),
    source: text("source").notNull(),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
    /** `{service: {strategy, reason}}`: how each service was replaced (rolling or recreate); null when none was. */
    strategiesJson: text("strategies_json"),
  },
  (t) => [index("deploys_app").on(t.appId), index("deploys_status").on(t.status)],
);

export const registries = sqliteTable("registries", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  url: text("url").notNull(),
  username: text("username").notNull(),
  /** AES-256-GCM sealed password or token. */
  passwordSealed: text("password_sealed").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});
