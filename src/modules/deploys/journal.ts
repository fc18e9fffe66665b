/**
 * The version journal: every content an app was asked to run is kept as a version (identical content is the same
 * version), what changed is recorded in activity, each outcome settles the version as good or failed, and a failed
 * deploy that touched the containers is rolled back to the last good version.
 */
import { diffCompose } from "../../compose/diff";
import { parseEnvFile } from "../../compose/envfile";
import { parseAppLabels } from "../../compose/labels";
import type { AppLabels, ComposeProject } from "../../compose/model";
import { parseCompose } from "../../compose/parse";
import type { Db } from "../../db";
import type { Secrets } from "../../lib/crypto";
import type { Actor } from "../activity/model";
import type { Activity } from "../activity/service";
import type { AppRepo, AppRow } from "../apps/repo";
import { serviceSummaries } from "../apps/view";
import type { ComposeRun } from "./compose-run";
import { diffEndpoints } from "./endpoint-diff";
import type { RunCtx } from "./operations";
import type { DeployRepo, VersionRow } from "./repo";

export interface JournalDeps {
  db: Db;
  apps: AppRepo;
  repo: DeployRepo;
  activity: Activity;
  secrets: Secrets;
  run: ComposeRun;
  now: () => string;
}

type EntryFields = Omit<Parameters<Activity["record"]>[0], "appSlug" | "appId">;

/** Record an activity entry of an app (a removed app is passed as `{id: null, slug}`). */
export function appEntry(activity: Activity, app: { id: number | null; slug: string }, e: EntryFields) {
  return activity.record({ ...e, appSlug: app.slug, appId: app.id ?? null });
}

/** Build the journal. */
export function createJournal(d: JournalDeps) {
  const entry = (app: { id: number | null; slug: string }, e: EntryFields) => appEntry(d.activity, app, e);

  /** Record a version's outcome: the version, the app, the journal row and one activity entry, in one transaction. */
  const settle = (rc: RunCtx, version: VersionRow, error: string | null, actor: Actor, kind: "deploy" | "rollback") =>
    d.db.tx(() => {
      const slug = rc.app.slug;
      const app = d.apps.byId(rc.app.id)!;
      if (error === null) {
        d.repo.setVersionStatus(version.id, "good");
        d.apps.update(app.id, { currentVersionId: version.id, lastDeployStatus: "succeeded", lastError: null }, d.now());
        d.repo.finishDeploy(rc.deployId, "succeeded", null, d.now());
        entry(app, {
          actor,
          category: "deploy",
          action: kind === "rollback" ? "rolled_back" : "deploy_succeeded",
          target: slug,
          summary:
            kind === "rollback"
              ? `${slug} rolled back to version ${version.version}`
              : `${slug} version ${version.version} deployed`,
          composeVersionId: version.id,
        });
        return;
      }
      const cancelled = error === "cancelled";
      d.repo.setVersionStatus(version.id, "failed");
      d.apps.update(app.id, { lastDeployStatus: cancelled ? "cancelled" : "failed", lastError: error }, d.now());
      d.repo.finishDeploy(rc.deployId, cancelled ? "cancelled" : "failed", error, d.now());
      entry(app, {
        actor,
        category: "deploy",
        action: kind === "rollback" ? "rollback_failed" : "deploy_failed",
        target: slug,
        summary: `${kind === "rollback" ? "rollback of" : "deploy of"} ${slug} version ${version.version} ${cancelled ? "was cancelled" : "failed"}`,
        error,
        composeVersionId: version.id,
      });
    });

  return {
    settle,

    /** Store the content as a version (identical content is the same version) and record what changed. */
    record(
      app: AppRow,
      content: { compose: string; env: string; hash: string },
      source: string,
      actor: Actor,
      parsed: ComposeProject | null,
    ): VersionRow {
      return d.db.tx(() => {
        const existing = d.repo.versionByHash(app.id, content.hash);
        const current = app.currentVersionId ? d.repo.version(app.currentVersionId) : undefined;
        const version =
          existing ??
          d.repo.insertVersion({
            appId: app.id,
            hash: content.hash,
            compose: content.compose,
            envSealed: d.secrets.seal(content.env),
            source,
            createdBy: actor.name,
            createdAt: d.now(),
          });
        if (!parsed) return version;
        const labels = parseAppLabels(parsed);
        // what the proxy needs of this version, read at start instead of checking every app's compose again
        if (version.routing === null) {
          const routing = JSON.stringify(labels);
          d.repo.setVersionRouting(version.id, routing);
          version.routing = routing;
        }
        // and what an app's view shows of its services, read instead of parsing the compose file again
        if (version.services === null) {
          const services = JSON.stringify(serviceSummaries(parsed));
          d.repo.setVersionServices(version.id, services);
          version.services = services;
        }
        if (current?.id === version.id) return version;
        const before = current ? safeParse(current.compose, d.secrets.open(current.envSealed)) : null;
        const endpoints = diffEndpoints(before ? safeLabels(before) : null, labels);
        if (endpoints) {
          entry(app, {
            actor,
            category: "endpoint",
            action: "endpoints_changed",
            target: app.slug,
            summary: `${actor.name} changed endpoints of ${app.slug}: ${endpoints.summary}`,
            composeVersionId: version.id,
            before: endpoints.before,
            after: endpoints.after,
          });
        }
        const diff = diffCompose(before, parsed);
        entry(app, {
          actor,
          category: "compose",
          action: current ? "compose_changed" : "compose_created",
          target: app.slug,
          summary: `${actor.name} ${existing ? `restored version ${version.version} of` : current ? "changed" : "set"} ${app.slug}${diff.summary ? `: ${diff.summary}` : ""}`,
          composeVersionId: version.id,
          before: diff.before,
          after: diff.after,
        });
        return version;
      });
    },

    /** After a failed deploy: run the last good version again (the app's files stay as the user left them). */
    async autoRollback(rc: RunCtx, failedVersion: VersionRow, actor: Actor): Promise<void> {
      const app = d.apps.byId(rc.app.id)!;
      if (!app.currentVersionId || app.currentVersionId === failedVersion.id) return;
      const good = d.repo.version(app.currentVersionId)!;
      rc.line("up", `rolling back to version ${good.version}`);
      const rollbackId = d.repo.insertDeploy({
        appId: app.id,
        versionId: good.id,
        action: "rollback",
        source: "system",
        now: d.now(),
      }).id;
      // the rollback is not cancelled with the deploy it repairs
      const rrc: RunCtx = { ...rc, app, deployId: rollbackId, signal: new AbortController().signal };
      let error: string | null;
      try {
        const p = d.run.prepare(app.slug, good.compose, d.secrets.open(good.envSealed));
        error = (await d.run.runVersion(rrc, p, { pullAll: false })).error;
      } catch (e) {
        error = (e as Error).message;
      }
      settle(rrc, good, error, actor, "rollback");
      // the app now runs the good version, but the failed content is what was last attempted
      d.apps.update(app.id, { lastDeployStatus: "failed", lastError: d.repo.deploy(rc.deployId)?.error ?? null }, d.now());
    },
  };
}

export type Journal = ReturnType<typeof createJournal>;

function safeParse(compose: string, envText: string): ComposeProject | null {
  try {
    return parseCompose(compose, parseEnvFile(envText));
  } catch {
    return null;
  }
}

function safeLabels(p: ComposeProject): AppLabels | null {
  try {
    return parseAppLabels(p);
  } catch {
    return null;
  }
}
