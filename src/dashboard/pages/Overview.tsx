/**
 * Home: who you are, the host's last hour (charts), what this server is, and the recent activity feed (refreshed
 * while the page is open).
 */
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ActivityItem } from "../components/ActivityItem";
import { ErrorText } from "../components/Field";
import { TrustLink } from "../components/TrustLink";
import { useResource } from "../hooks";
import { Link } from "../router";
import { useSession } from "../session";
import { useSystemInfo } from "../sysinfo";
import { ROLE_LABELS } from "../types";
import { HostCharts } from "./HostCharts";

const REFRESH_MS = 15_000;

function RecentActivity() {
  const recent = useResource(() => api.activity.recent());
  useEffect(() => {
    const t = setInterval(() => {
      if (document.visibilityState === "visible") void recent.reload();
    }, REFRESH_MS);
    return () => clearInterval(t);
  }, [recent.reload]);
  const entries = recent.data?.entries ?? [];
  return (
    <section class="card" aria-labelledby="recent-title">
      <div class="card-head">
        <h2 id="recent-title">Recent activity</h2>
        <Link href="/activity">All activity</Link>
      </div>
      <ErrorText error={recent.error} />
      {recent.data && entries.length === 0 && <p class="muted">Nothing has happened yet.</p>}
      {!recent.data && recent.loading && <p class="muted">Loading…</p>}
      <ul class="entries" aria-label="Recent activity" aria-busy={recent.loading}>
        {entries.map((e) => (
          <ActivityItem key={e.id} entry={e} />
        ))}
      </ul>
    </section>
  );
}

function ServerInfo() {
  const info = useSystemInfo();
  return (
    <section class="card" aria-labelledby="server-title">
      <h2 id="server-title">Server</h2>
      <ErrorText error={info.error} />
      {info.data && (
        <dl class="facts">
          <dt>Version</dt>
          <dd>{info.data.version}</dd>
          <dt>Commit</dt>
          <dd>
            <code>{info.data.commit}</code>
          </dd>
          <dt>TLS mode</dt>
          <dd>
            {info.data.tls_mode}
            {info.data.tls_mode === "local" && (
              <>
                {" · "}
                <TrustLink>Trust the local CA</TrustLink>
              </>
            )}
          </dd>
          <dt>Domain</dt>
          <dd>{info.data.domain ?? <span class="muted">none</span>}</dd>
        </dl>
      )}
    </section>
  );
}

/** The overview page. */
export function Overview() {
  const { me } = useSession();
  return (
    <>
      <div class="page-head">
        <h1>Overview</h1>
        <p class="muted">
          Signed in as {me.username} ({ROLE_LABELS[me.role] ?? me.role})
          {me.role !== "super_admin" && me.role !== "admin" && (
            <> · apps: {me.app_access.length ? me.app_access.join(", ") : "none granted yet"}</>
          )}
        </p>
      </div>
      <HostCharts />
      <div class="grid">
        <RecentActivity />
        <ServerInfo />
      </div>
    </>
  );
}
