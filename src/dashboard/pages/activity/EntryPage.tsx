/** One activity entry: every field, and the before/after snapshots as a readable diff. */
import type { ComponentChildren } from "preact";
import { api } from "../../api";
import { CategoryBadge, SyncBadge } from "../../components/ActivityItem";
import { DiffView } from "../../components/DiffView";
import { ErrorText } from "../../components/Field";
import { formatTime, humanize, relativeTime, sourceLabel } from "../../format";
import { useResource } from "../../hooks";
import { Link } from "../../router";
import type { ActivityDetail } from "../../types";
import { lastListUrl } from "./filter";

function Fact({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children ?? <span class="muted">none</span>}</dd>
    </>
  );
}

function Facts({ e }: { e: ActivityDetail }) {
  return (
    <dl class="facts">
      <Fact label="Category">
        <CategoryBadge category={e.category} />
      </Fact>
      <Fact label="Action">{humanize(e.action)}</Fact>
      <Fact label="Target">{e.target}</Fact>
      <Fact label="App">{e.app_slug && <Link href={`/activity?app=${encodeURIComponent(e.app_slug)}`}>{e.app_slug}</Link>}</Fact>
      <Fact label="Actor">{e.actor_name}</Fact>
      <Fact label="Source">{sourceLabel(e.actor_source)}</Fact>
      <Fact label="IP address">{e.ip}</Fact>
      <Fact label="Time">
        <time dateTime={e.created_at}>
          {formatTime(e.created_at)} ({relativeTime(e.created_at)})
        </time>
      </Fact>
      {e.error && <Fact label="Error">{<span class="error-inline">{e.error}</span>}</Fact>}
      {e.compose_version_id !== null && <Fact label="Compose version">#{e.compose_version_id}</Fact>}
      {e.sync_status && (
        <Fact label="Git sync">
          <SyncBadge status={e.sync_status} />
          {e.sync_commit_sha && <code> {e.sync_commit_sha.slice(0, 12)}</code>}
          {e.sync_error && <span class="error-inline"> {e.sync_error}</span>}
        </Fact>
      )}
      <Fact label="Entry id">#{e.id}</Fact>
    </dl>
  );
}

/** The entry page for `/activity/:id`. */
export function EntryPage({ id }: { id: string }) {
  const valid = /^\d+$/.test(id);
  const entry = useResource(() => (valid ? api.activity.get(Number(id)) : Promise.reject(new Error("Not Found"))), [id]);
  const e = entry.data;
  return (
    <>
      <p class="back">
        <Link href={lastListUrl()}>← Activity</Link>
      </p>
      <ErrorText error={entry.error} />
      {!e && entry.loading && <p class="muted">Loading…</p>}
      {e && (
        <>
          <div class="page-head">
            <h1>{e.summary}</h1>
          </div>
          <div class="grid detail-grid">
            <section class="card" aria-labelledby="entry-facts-title">
              <h2 id="entry-facts-title">Details</h2>
              <Facts e={e} />
            </section>
            <section class="card" aria-labelledby="entry-diff-title">
              <h2 id="entry-diff-title">Changes</h2>
              <DiffView before={e.before_json} after={e.after_json} />
              {(e.before_json !== null || e.after_json !== null) && (
                <details class="raw">
                  <summary>Raw snapshots</summary>
                  <div class="raw-grid">
                    <div>
                      <h3>Before</h3>
                      <pre>{JSON.stringify(e.before_json, null, 2)}</pre>
                    </div>
                    <div>
                      <h3>After</h3>
                      <pre>{JSON.stringify(e.after_json, null, 2)}</pre>
                    </div>
                  </div>
                </details>
              )}
            </section>
          </div>
        </>
      )}
    </>
  );
}
