/** The apps overview: one card per app with its live status (polled while the page is visible) and a New app button. */
import { api } from "../../api";
import { ErrorText } from "../../components/Field";
import { Icon } from "../../components/icons";
import { formatTime, humanize, relativeTime } from "../../format";
import { usePolled } from "../../hooks";
import { Link } from "../../router";
import { mayMutateApps, useSession } from "../../session";
import type { AppView } from "../../types";
import { ResultBadge, StatusBadge } from "./badges";

/** How often the list is refreshed while visible. */
export const APPS_POLL_MS = 2500;

function LastDeploy({ app }: { app: AppView }) {
  const d = app.last_deploy;
  if (!d) return <span class="muted">never deployed</span>;
  return (
    <span class="app-last">
      {humanize(d.action)} <ResultBadge status={d.status} />{" "}
      <time dateTime={d.started_at} title={formatTime(d.started_at)}>
        {relativeTime(d.started_at)}
      </time>
      {d.error && <span class="error-inline app-last-error">{d.error}</span>}
    </span>
  );
}

function AppCard({ app }: { app: AppView }) {
  const n = app.services.length;
  return (
    <li class="card app-card" aria-label={app.slug}>
      <div class="app-card-head">
        <Link href={`/apps/${encodeURIComponent(app.slug)}`} class="app-name">
          {app.slug}
        </Link>
        <StatusBadge status={app.status} />
      </div>
      <dl class="facts app-facts">
        <dt>Services</dt>
        <dd>
          {n} {n === 1 ? "service" : "services"}
          {n > 0 && <span class="muted"> ({app.services.map((s) => s.name).join(", ")})</span>}
        </dd>
        <dt>Version</dt>
        <dd>{app.current_version ? `version ${app.current_version.version}` : <span class="muted">none yet</span>}</dd>
        <dt>Last deploy</dt>
        <dd>
          <LastDeploy app={app} />
        </dd>
      </dl>
    </li>
  );
}

/** The page at /apps. */
export function AppsPage() {
  const { me } = useSession();
  const apps = usePolled(() => api.apps.list(), APPS_POLL_MS);
  const list = apps.data ?? [];
  const canCreate = mayMutateApps(me);
  return (
    <>
      <div class="page-head page-head-row">
        <div>
          <h1>Apps</h1>
          <p class="muted">Compose apps on this server, with their live status.</p>
        </div>
        {canCreate && (
          <Link href="/new-app" class="btn primary">
            <Icon name="plus" />
            New app
          </Link>
        )}
      </div>
      <ErrorText error={apps.error} />
      {!apps.data && apps.loading && <p class="muted">Loading…</p>}
      {apps.data && list.length === 0 && (
        <section class="card empty-state">
          <h2>No apps yet</h2>
          <p class="muted">
            {canCreate
              ? "Deploy a compose file to create the first one."
              : "No app has been granted to you yet. Ask an administrator for access."}
          </p>
          {canCreate && (
            <Link href="/new-app" class="btn primary">
              New app
            </Link>
          )}
        </section>
      )}
      <ul class="app-list" aria-label="Apps">
        {list.map((a) => (
          <AppCard key={a.slug} app={a} />
        ))}
      </ul>
    </>
  );
}
