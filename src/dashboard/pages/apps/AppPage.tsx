/**
 * One app: header with live status and the lifecycle actions, the output of the operation in flight, and sections as
 * tabs in the URL (`?tab=versions`): services, endpoints, traffic, metrics, backups, deploy, versions, compose, env, logs,
 * activity.
 */
import type { ComponentChildren } from "preact";
import { useEffect } from "preact/hooks";
import { api } from "../../api";
import { ErrorText } from "../../components/Field";
import { formatTime, relativeTime } from "../../format";
import { usePolled } from "../../hooks";
import { Link, useLocation } from "../../router";
import { mayMutateApps, useSession } from "../../session";
import { ActivityTab } from "./ActivityTab";
import { AppActions } from "./AppActions";
import { BackupsTab } from "./BackupsTab";
import { StatusBadge } from "./badges";
import { ComposeTab } from "./ComposeTab";
import { DeployConsole } from "./DeployConsole";
import { DeployTab } from "./DeployTab";
import { EndpointsTab } from "./EndpointsTab";
import { EnvTab } from "./EnvTab";
import { LogsTab } from "./LogsTab";
import { MetricsTab } from "./MetricsTab";
import { ServicesTab } from "./ServicesTab";
import { TemplateNotice } from "./TemplateNotice";
import { TrafficTab } from "./TrafficTab";
import { TABS, type TabId, tabHref } from "./tabs";
import { useDeployRun } from "./useDeployRun";
import { VersionsTab } from "./VersionsTab";

/** How often the app is refreshed while visible. */
export const APP_POLL_MS = 2000;

/** The page at /apps/:slug. */
export function AppPage({ slug }: { slug: string }) {
  const { me } = useSession();
  const canEdit = mayMutateApps(me);
  const { query } = useLocation();
  const tab: TabId = TABS.find((t) => t.id === query.get("tab"))?.id ?? "services";
  const app = usePolled(() => api.apps.get(slug), APP_POLL_MS, [slug]);
  const run = useDeployRun();
  const status = app.data?.status;

  // follow an operation already in flight, and any that starts elsewhere while the page is open
  useEffect(() => run.watch(slug), [slug]);
  useEffect(() => {
    if (status === "deploying") run.watch(slug);
  }, [status, slug]);
  useEffect(() => {
    if (run.state.finished > 0) void app.reload();
  }, [run.state.finished]);

  const a = app.data;
  const running = run.state.phase === "starting" || run.state.phase === "running" || run.state.phase === "finishing";
  const busy = running || status === "deploying";
  // a 404 is final (removed elsewhere, or the grant was revoked), even with an older view on screen
  const gone = app.error?.startsWith("Not Found") ?? false;

  if (gone) {
    return (
      <section class="card empty-state">
        <h1>App not found</h1>
        <p>There is no app {slug}, or it is not granted to you.</p>
        <Link href="/apps">Back to the apps</Link>
      </section>
    );
  }

  let body: ComponentChildren = null;
  if (a) {
    switch (tab) {
      case "services":
        body = <ServicesTab app={a} run={run} canEdit={canEdit} busy={busy} />;
        break;
      case "endpoints":
        body = <EndpointsTab app={a} run={run} canEdit={canEdit} busy={busy} />;
        break;
      case "traffic":
        body = <TrafficTab app={a} />;
        break;
      case "metrics":
        body = <MetricsTab app={a} />;
        break;
      case "backups":
        body = <BackupsTab app={a} canEdit={canEdit} />;
        break;
      case "deploy":
        body = <DeployTab app={a} run={run} />;
        break;
      case "versions":
        body = <VersionsTab app={a} run={run} canEdit={canEdit} busy={busy} />;
        break;
      case "compose":
        body = <ComposeTab app={a} run={run} canEdit={canEdit} busy={busy} />;
        break;
      case "env":
        body = <EnvTab app={a} run={run} canEdit={canEdit} busy={busy} />;
        break;
      case "logs":
        body = <LogsTab app={a} />;
        break;
      case "activity":
        body = <ActivityTab slug={slug} finished={run.state.finished} />;
        break;
    }
  }

  return (
    <>
      <p class="back">
        <Link href="/apps">← Apps</Link>
      </p>
      <div class="app-head">
        <div class="app-title">
          <h1>{slug}</h1>
          {a && <StatusBadge status={a.status} />}
        </div>
        {a && canEdit && <AppActions app={a} run={run} busy={busy} />}
      </div>
      {a && (
        <p class="app-summary muted">
          {a.current_version ? `Version ${a.current_version.version}` : "No good version yet"}
          {" · "}
          {a.services.length} {a.services.length === 1 ? "service" : "services"}
          {a.template && ` · from template ${a.template.id} (version ${a.template.version})`}
          {a.last_deploy && (
            <>
              {" · "}last {a.last_deploy.action} {a.last_deploy.status}{" "}
              <time dateTime={a.last_deploy.started_at} title={formatTime(a.last_deploy.started_at)}>
                {relativeTime(a.last_deploy.started_at)}
              </time>
            </>
          )}
          {!canEdit && " · read only"}
        </p>
      )}
      {a?.template && <TemplateNotice slug={slug} template={a.template} />}
      {a?.last_error && (a.status === "failed" || a.status === "degraded" || a.last_deploy?.status === "failed") && (
        <p class="error-text app-last-error">Last error: {a.last_error}</p>
      )}
      <ErrorText error={a ? null : app.error} />
      {!a && app.loading && <p class="muted">Loading…</p>}
      {tab !== "deploy" && <DeployConsole state={run.state} compact onDismiss={run.dismiss} fullHref={tabHref(slug, "deploy")} />}
      <nav class="tabs" aria-label="App sections">
        <ul>
          {TABS.map((t) => (
            <li key={t.id}>
              <Link href={tabHref(slug, t.id)} aria-current={t.id === tab ? "page" : undefined}>
                {t.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div class="tab-body">{body}</div>
    </>
  );
}
