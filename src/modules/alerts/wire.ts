/**
 * Builds `ctx.alerts` from the services around it: the evaluator's sources (apps and their containers, request
 * stats, the certificates the proxy serves) are adapted here so the evaluator itself only knows narrow interfaces.
 */
import type { Db } from "../../db";
import type { Clock } from "../../lib/time";
import type { Log } from "../../log/logger";
import type { Activity } from "../activity/service";
import type { AppRepo } from "../apps/repo";
import type { StatusBoard } from "../apps/status";
import type { AppViews } from "../apps/view";
import type { RequestStatsStore } from "../metrics/request-stats";
import type { MetricsReader } from "../metrics/samples";
import type { UserRepo } from "../users/repo";
import { createEvaluator } from "./evaluator";
import { createAlertRepo } from "./repo";
import { createAlerts } from "./service";
import type { AppsSource, CertSource, Notifier, ServedCert } from "./sources";

export interface AlertWiring {
  db: Db;
  clock: Clock;
  log: Log;
  activity: Activity;
  userRepo: Pick<UserRepo, "grants">;
  appRepo: AppRepo;
  appViews: Pick<AppViews, "routing">;
  status: StatusBoard;
  /** Whether a deploy or lifecycle operation runs for the app (its containers come and go meanwhile). */
  busy: (slug: string) => boolean;
  requestStats: Pick<RequestStatsStore, "query">;
  /** The certificate manager of the running proxy, or null. */
  certInfo: () => ((host: string) => { source: string | null; notAfter: string | null } | null) | null;
  reader: MetricsReader | null;
  notifier: Notifier;
  /** Timer of the non-metric kinds (tests shorten it). */
  everyMs?: number;
}

/** Build the alerts service with its evaluator. */
export function wireAlerts(w: AlertWiring) {
  const live = () => w.appRepo.list().filter((a) => !a.removedAt);
  const apps: AppsSource = {
    live: () => live().map((a) => a.slug),
    deployed: () =>
      live()
        .filter((a) => a.currentVersionId !== null)
        .map((a) => a.slug),
    running: (slug) =>
      !w.status.up || w.busy(slug) ? null : w.status.containers(slug).filter((c) => c.state === "running").length,
  };
  const certs: CertSource = {
    certs() {
      const info = w.certInfo();
      if (!info) return [];
      const out: ServedCert[] = [];
      for (const a of live()) {
        const hosts = new Set((w.appViews.routing(a)?.endpoints ?? []).flatMap((e) => e.hosts));
        for (const host of hosts) {
          const i = info(host);
          // local-CA and fallback certificates renew themselves; ACME and uploaded ones are the operator's concern
          if (!i?.notAfter || (i.source !== "acme" && i.source !== "custom")) continue;
          out.push({ app: a.slug, host, notAfter: Date.parse(i.notAfter) });
        }
      }
      return out;
    },
  };
  const repo = createAlertRepo(w.db);
  const evaluator = createEvaluator({
    db: w.db,
    repo,
    clock: w.clock,
    log: w.log,
    reader: w.reader,
    notifier: w.notifier,
    apps,
    requests: {
      window: (slug, ms) => {
        const q = w.requestStats.query(slug, ms);
        return { requests: q.requests, errors5xx: q.status_classes["5xx"] ?? 0 };
      },
    },
    certs,
    everyMs: w.everyMs,
  });
  return createAlerts({
    db: w.db,
    clock: w.clock,
    repo,
    activity: w.activity,
    grants: (id) => w.userRepo.grants(id),
    appId: (slug) => {
      const a = w.appRepo.bySlug(slug);
      return a && !a.removedAt ? a.id : null;
    },
    evaluator,
  });
}
