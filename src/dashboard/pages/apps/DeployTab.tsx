/**
 * The Deploy tab: live output of the operation in flight (or the last one followed here), and the app's recent
 * deploys and actions from the journal. The server keeps no output of finished deploys, only their result.
 */
import { api } from "../../api";
import { ErrorText } from "../../components/Field";
import { formatTime, humanize, relativeTime, sourceLabel } from "../../format";
import { useResource } from "../../hooks";
import type { AppView, DeployRecord } from "../../types";
import { ResultBadge } from "./badges";
import { DeployConsole } from "./DeployConsole";
import type { DeployRun } from "./useDeployRun";

function duration(d: DeployRecord): string {
  if (!d.finished_at) return "";
  const ms = new Date(d.finished_at).getTime() - new Date(d.started_at).getTime();
  if (!Number.isFinite(ms) || ms < 0) return "";
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** How a deploy replaced each service (rolling or recreate), the reason on hover and for screen readers. */
function Strategies({ of }: { of: DeployRecord["strategies"] }) {
  const entries = Object.entries(of ?? {});
  if (entries.length === 0) return null;
  return (
    <ul class="plain-list small" aria-label="How each service was replaced">
      {entries.map(([service, s]) => (
        <li key={service} title={s.reason}>
          {service}: <span class={s.strategy === "rolling" ? "ok-text" : "muted"}>{s.strategy}</span>
          <span class="sr-only"> ({s.reason})</span>
        </li>
      ))}
    </ul>
  );
}

function RecentDeploys({ slug, version }: { slug: string; version: string }) {
  const list = useResource(() => api.apps.deploys(slug), [slug, version]);
  return (
    <section class="card" aria-labelledby="deploys-title">
      <div class="card-head">
        <h2 id="deploys-title">Recent deploys and actions</h2>
        <button type="button" class="btn small" onClick={() => void list.reload()}>
          Refresh
        </button>
      </div>
      <ErrorText error={list.error} />
      {list.data && list.data.length === 0 && <p class="muted">Nothing has run yet.</p>}
      {list.data && list.data.length > 0 && (
        <div class="table-wrap">
          <table class="table stack" aria-label="Recent deploys">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Action</th>
                <th scope="col">Result</th>
                <th scope="col">Via</th>
                <th scope="col">Started</th>
                <th scope="col">Took</th>
                <th scope="col">Replaced</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((d) => (
                <tr key={d.id}>
                  <th scope="row">#{d.id}</th>
                  <td data-label="Action">{humanize(d.action)}</td>
                  <td data-label="Result">
                    <ResultBadge status={d.status} />
                  </td>
                  <td data-label="Via">{sourceLabel(d.source)}</td>
                  <td data-label="Started">
                    <time dateTime={d.started_at} title={formatTime(d.started_at)}>
                      {relativeTime(d.started_at)}
                    </time>
                  </td>
                  <td data-label="Took">{duration(d)}</td>
                  <td data-label="Replaced">
                    <Strategies of={d.strategies} />
                  </td>
                  <td data-label="Error" class="error-inline">
                    {d.error}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** The tab. */
export function DeployTab({ app, run }: { app: AppView; run: DeployRun }) {
  const last = app.last_deploy;
  return (
    <>
      {run.state.phase === "idle" ? (
        <section class="card">
          <h2>Deploy output</h2>
          <p class="muted">
            No deploy or action is running. Output appears here live while one runs; the server keeps only the result of finished
            ones (below).
          </p>
        </section>
      ) : (
        <DeployConsole state={run.state} onDismiss={run.dismiss} />
      )}
      <RecentDeploys slug={app.slug} version={`${last?.id ?? 0}:${last?.status ?? ""}:${run.state.finished}`} />
    </>
  );
}
