/** The wire form of an app: desired state, live containers, services and endpoints of the version it runs. */
import { parseEnvFile } from "../../compose/envfile";
import type { AppLabels, ComposeProject, Endpoint, ServiceInfo } from "../../compose/model";
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
  /** The service summaries kept with a version (JSON of `ServiceSummary[]`), null when it has none. */
  versionServices(id: number): string | null;
  /** Keep the service summaries of a version stored before they were. */
  setVersionServices(id: number, services: string): void;
  lastDeploy(appId: number): LastDeployRow | undefined;
  /** The latest deploy of every app, by app id (one statement for the apps list). */
  lastDeploys(): Map<number, LastDeployRow>;
}

/** What a view shows of an app's latest deploy (the deploys repository reads it). */
export interface LastDeployRow {
  id: number;
  action: string;
  status: DeployStatus;
  error: string | null;
  startedAt: string;
  finishedAt: string | null;
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

/**
 * What a view reads of one service, kept with each version (compose_versions.services) so no view parses a file:
 * what the compose file says, not what Sundeck concludes from it (scalability is judged when the view is built).
 */
export type ServiceSummary = Pick<
  ServiceInfo,
  "name" | "image" | "replicas" | "ports" | "scalable" | "containerName" | "namedVolumes"
>;

/** The summaries of a parsed project's services, in file order. */
export function serviceSummaries(project: ComposeProject): ServiceSummary[] {
  return project.services.map((s) => ({
    name: s.name,
    image: s.image,
    replicas: s.replicas,
    ports: s.ports,
    scalable: s.scalable,
    containerName: s.containerName ?? null,
    namedVolumes: s.namedVolumes,
  }));
}

type Routing = { endpoints: Endpoint[]; labels: AppLabels };

/**
 * Builds app views. A version's routing and services are read from its row (written when a deploy checked it) and
 * cached by id. Only a version kept before they were, or an app with files and no version yet, has its compose
 * checked, once, and only what a view shows of it is kept: a view of every app after a start reads rows, and holds
 * neither a parsed document per app nor the garbage of parsing them.
 */
export function createAppViews(d: ViewDeps) {
  /** Routing settings and service summaries read from version rows, by version id (a version never changes). */
  const routings = new Map<number, Routing>();
  const summaries = new Map<number, ServiceSummary[]>();
  /** What a check of the compose found (null: it did not pass), for versions without stored settings and file-only apps. */
  const checked = new Map<string, (Routing & { services: ServiceSummary[] }) | null>();

  /** Scalability of each cached summary, judged once (the apps list shows every service's). */
  const verdicts = new WeakMap<ServiceSummary, ReturnType<typeof scalability>>();
  const judged = (s: ServiceSummary) => {
    let v = verdicts.get(s);
    if (!v) verdicts.set(s, (v = scalability(s)));
    return v;
  };

  /** Version numbers by id (a version never changes): the apps list names every app's without reading its row. */
  const numbers = new Map<number, number | null>();

  const remember = <K, V>(m: Map<K, V>, k: K, v: V) => {
    if (m.size > 500) m.clear();
    m.set(k, v);
    return v;
  };

  /** Check the compose of the version (or, without one, the files): once per version id or file content. */
  const check = (app: AppRow) => {
    const id = app.currentVersionId ?? app.attemptedVersionId;
    const key = id ? `v${id}` : `f${app.slug}:${d.files.read(app.slug)?.hash ?? ""}`;
    if (checked.has(key)) return checked.get(key) ?? null;
    const v = id ? d.journal.version(id) : undefined;
    const src = v ? { compose: v.compose, env: d.secrets.open(v.envSealed) } : d.files.read(app.slug);
    let value: (Routing & { services: ServiceSummary[] }) | null = null;
    try {
      if (src) {
        const p = d.prepare(app.slug, src.compose, src.env);
        value = { endpoints: p.labels.endpoints, labels: p.labels, services: serviceSummaries(p.project) };
      }
    } catch {
      value = null;
    }
    // a version from before these were stored: keep them with it, so this check is the last
    if (v && value) {
      if (d.journal.versionRouting(v.id) === null) d.journal.setVersionRouting(v.id, JSON.stringify(value.labels));
      if (d.journal.versionServices(v.id) === null) d.journal.setVersionServices(v.id, JSON.stringify(value.services));
    }
    return remember(checked, key, value);
  };

  /** The service summaries of the version an app runs (or its files), [] when none passes the checks. */
  const services = (app: AppRow): ServiceSummary[] => {
    const id = app.currentVersionId ?? app.attemptedVersionId;
    const hit = id ? (summaries.get(id) ?? readServices(d.journal.versionServices(id))) : null;
    if (id && hit) return remember(summaries, id, hit);
    return check(app)?.services ?? [];
  };

  /** The routing settings of the version an app runs (what the proxy serves), or null when none parses. */
  const routing = (app: AppRow): Routing | null => {
    const id = app.currentVersionId ?? app.attemptedVersionId;
    const hit = id ? (routings.get(id) ?? readRouting(d.journal.versionRouting(id))) : null;
    if (id && hit) return remember(routings, id, hit);
    const c = check(app);
    return c ? { endpoints: c.endpoints, labels: c.labels } : null;
  };

  /** The view of one app with its latest deploy. */
  const build = (app: AppRow, last: LastDeployRow | undefined): AppView => {
    const containers = d.status.containers(app.slug);
    const status: AppStatus = deriveStatus(app, containers, d.busy(app.slug), d.status.up);
    const shown = routing(app);
    const scale = appScale(app);
    const currentId = app.currentVersionId;
    if (currentId && !numbers.has(currentId)) {
      if (numbers.size > 5000) numbers.clear();
      numbers.set(currentId, d.journal.versionNumber(currentId));
    }
    const currentNo = currentId ? (numbers.get(currentId) ?? null) : null;
    return {
      slug: app.slug,
      status,
      stopped: app.stopped,
      services: services(app).map((s) => ({
        name: s.name,
        image: s.image,
        replicas: scale[s.name] ?? s.replicas ?? 1,
        ports: s.ports.map((x) => `${x.hostIp || "127.0.0.1"}:${x.published}:${x.target}/${x.protocol}`),
        scalable: judged(s),
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
      endpoints: (shown?.endpoints ?? []).map((e) => ({
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
  };

  return {
    routing,

    /** The full view of one app. */
    view(app: AppRow): AppView {
      return build(app, d.journal.lastDeploy(app.id));
    },

    /** The views of these apps, their latest deploys read in one statement. */
    list(apps: AppRow[]): AppView[] {
      const last = d.journal.lastDeploys();
      return apps.map((a) => build(a, last.get(a.id)));
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

/** A version row's services JSON, or null when it has none or it does not read as a list. */
function readServices(text: string | null): ServiceSummary[] | null {
  if (!text) return null;
  try {
    const list = JSON.parse(text) as ServiceSummary[];
    return Array.isArray(list) ? list : null;
  } catch {
    return null;
  }
}

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
