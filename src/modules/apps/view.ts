/** The wire form of an app: desired state, live containers, services and endpoints of the version it runs. */
import { parseEnvFile } from "../../compose/envfile";
import type { AppLabels, ComposeProject, Endpoint } from "../../compose/model";
import type { Prepared } from "../../compose/prepare";
import { scalability } from "../../compose/scaling";
import type { Secrets } from "../../lib/crypto";
import type { AppView } from "../../shared/apps";
import type { DeployStatus } from "../../shared/deploys";
import type { AppFilesStore } from "./files";
import { type AppRepo, type AppRow, appScale } from "./repo";
import { type AppStatus, deriveStatus, type StatusBoard } from "./status";

/** What a view reads of the deploy journal (the deploys module provides it; apps does not import deploys). */
export interface JournalReader {
  version(id: number): { id: number; version: number; compose: string; envSealed: string } | undefined;
  /** A version's number alone (no compose text), null when there is no such version. */
  versionNumber(id: number): number | null;
  /** The routing settings kept with a version (JSON of its labels), null when it has none. */
  versionRouting(id: number): string | null;
  /** Keep the routing settings of a version stored before they were (checked once, then read from the row). */
  setVersionRouting(id: number, routing: string): void;
  lastDeploy(
    appId: number,
  ):
    | { id: number; action: string; status: DeployStatus; error: string | null; startedAt: string; finishedAt: string | null }
    | undefined;
}

export interface ViewDeps {
  repo: AppRepo;
  journal: JournalReader;
  files: AppFilesStore;
  status: StatusBoard;
  secrets: Secrets;
  busy: (slug: string) => boolean;
  prepare: (slug: string, compose: string, env: string) => Prepared;
}

/** The template an app row remembers, or null (also for a value that does not read as one). */
function templateOf(json: string | null): { id: string; version: number } | null {
  if (!json) return null;
  try {
    const t = JSON.parse(json) as { id?: unknown; version?: unknown };
    return typeof t.id === "string" && typeof t.version === "number" ? { id: t.id, version: t.version } : null;
  } catch {
    return null;
  }
}

/** Builds app views, caching the parse of each version. */
export function createAppViews(d: ViewDeps) {
  const cache = new Map<string, { project: ComposeProject; endpoints: Endpoint[]; labels: AppLabels } | null>();

  /** Routing settings read from version rows, by version id (a version never changes what it routes). */
  const stored = new Map<number, { endpoints: Endpoint[]; labels: AppLabels }>();

  /** Version numbers by id (a version never changes): the apps list names every app's without reading its row. */
  const numbers = new Map<number, number | null>();

  const parsed = (app: AppRow) => {
    const id = app.currentVersionId ?? app.attemptedVersionId;
    // a version's parse is cached by its id alone: its row (compose and sealed env) is read on a miss only
    const key = id ? `v${id}` : `f${app.slug}:${d.files.read(app.slug)?.hash ?? ""}`;
    if (!cache.has(key)) {
      const v = id ? d.journal.version(id) : undefined;
      const src = v ? { compose: v.compose, env: d.secrets.open(v.envSealed) } : d.files.read(app.slug);
      let value: { project: ComposeProject; endpoints: Endpoint[]; labels: AppLabels } | null = null;
      try {
        if (src) {
          const p = d.prepare(app.slug, src.compose, src.env);
          value = { project: p.project, endpoints: p.labels.endpoints, labels: p.labels };
        }
      } catch {
        value = null;
      }
      if (cache.size > 500) cache.clear();
      cache.set(key, value);
    }
    return cache.get(key) ?? null;
  };

  return {
    /** The routing settings of the version an app runs (what the proxy serves), or null when none parses. */
    routing(app: AppRow): { endpoints: Endpoint[]; labels: AppLabels } | null {
      const id = app.currentVersionId ?? app.attemptedVersionId;
      const hit = id ? (stored.get(id) ?? readRouting(d.journal.versionRouting(id))) : null;
      if (id && hit) {
        if (stored.size > 500) stored.clear();
        stored.set(id, hit);
        return hit;
      }
      // a version kept before its routing was (or an app with none yet): check its compose, once
      const p = parsed(app);
      if (id && p && d.journal.version(id)) d.journal.setVersionRouting(id, JSON.stringify(p.labels));
      return p ? { endpoints: p.endpoints, labels: p.labels } : null;
    },

    /** The full view of one app. */
    view(app: AppRow): AppView {
      const containers = d.status.containers(app.slug);
      const status: AppStatus = deriveStatus(app, containers, d.busy(app.slug), d.status.up);
      const p = parsed(app);
      const scale = appScale(app);
      const currentId = app.currentVersionId;
      if (currentId && !numbers.has(currentId)) {
        if (numbers.size > 5000) numbers.clear();
        numbers.set(currentId, d.journal.versionNumber(currentId));
      }
      const currentNo = currentId ? (numbers.get(currentId) ?? null) : null;
      const last = d.journal.lastDeploy(app.id);
      return {
        slug: app.slug,
        status,
        stopped: app.stopped,
        services: (p?.project.services ?? []).map((s) => ({
          name: s.name,
          image: s.image,
          replicas: scale[s.name] ?? s.replicas ?? 1,
          ports: s.ports.map((x) => `${x.hostIp || "127.0.0.1"}:${x.published}:${x.target}/${x.protocol}`),
          scalable: scalability(s),
          containers: containers
            .filter((c) => c.service === s.name)
            .map((c) => ({
              id: c.id.slice(0, 12),
              name: c.name,
              number: c.number,
              state: c.state,
              status: c.status,
              health: c.health,
            })),
        })),
        endpoints: (p?.endpoints ?? []).map((e) => ({
          service: e.service,
          hosts: e.hosts,
          port: e.port,
          path: e.path,
          tls: e.tls,
        })),
        current_version: currentId && currentNo !== null ? { id: currentId, version: currentNo } : null,
        template: templateOf(app.templateJson),
        last_deploy: last
          ? {
              id: last.id,
              action: last.action,
              status: last.status,
              error: last.error,
              started_at: last.startedAt,
              finished_at: last.finishedAt,
            }
          : null,
        last_error: app.lastError,
        created_at: app.createdAt,
        updated_at: app.updatedAt,
      };
    },

    /** Env of the version on disk; values only for callers who may change the app. */
    env(slug: string, withValues: boolean): Record<string, string | null> {
      const f = d.files.read(slug);
      const env = f ? parseEnvFile(f.env) : {};
      return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, withValues ? v : null]));
    },
  };
}

export type AppViews = ReturnType<typeof createAppViews>;

/** A version row's routing JSON, or null when it has none or it does not read as labels. */
function readRouting(text: string | null): { endpoints: Endpoint[]; labels: AppLabels } | null {
  if (!text) return null;
  try {
    const labels = JSON.parse(text) as AppLabels;
    return Array.isArray(labels?.endpoints) ? { endpoints: labels.endpoints, labels } : null;
  } catch {
    return null;
  }
}
